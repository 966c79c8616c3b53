/**
 * Rotary position embedding on the rows of one batch's heads:
 *
 * `rotary(xp, cp, sp, op, heads, T, D, transposed)`: x and out are `heads` blocks of T rows of D floats
 * (at xp and op), cos and sin one block of T rows (at cp and sp) that every head reads. Element i of a row
 * pairs with i + D/2 in the first half and with i − D/2 in the second:
 * out_i = x_i·cos_i + x_partner·sin_(i, or the partner's when transposed, the gradient). Each product is
 * rounded to float32 before the sum, as the TypeScript kernel (../../cpu/rotary.ts) rounds it, so the
 * bits are the same. D/2 a multiple of 4 goes four elements at a time; the rest one at a time.
 */
import { type Code, I32, type ModuleBuilder, V128 } from '../builder.js';
import { rowLoop } from './common.js';

function emitRotary(c: Code): void {
  const [xp, cp, sp, op, heads, T, D, transposed] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [h, t, p, hb, x, o, cr, sr, own, partner] = Array.from({ length: 10 }, () => c.local(I32));
  const [x1, x2] = [c.local(V128), c.local(V128)];
  // hb: bytes of half a row; own / partner: where a first-half element's sine term reads the sine (its
  // own, or its partner's when transposed), the second half reads the other one.
  c.localGet(D).i32Const(1).i32Shl().localSet(hb);
  c.localGet(hb).i32Const(0).localGet(transposed).select().localSet(own);
  c.localGet(hb).localGet(own).i32Sub().localSet(partner);
  c.localGet(xp).localSet(x);
  c.localGet(op).localSet(o);
  c.i32Const(0).localSet(h);
  c.block().loop();
  c.localGet(h).localGet(heads).i32GeS().brIf(1);
  c.localGet(cp).localSet(cr);
  c.localGet(sp).localSet(sr);
  c.i32Const(0).localSet(t);
  c.block().loop();
  c.localGet(t).localGet(T).i32GeS().brIf(1);
  const at = (base: number, extra?: number) => {
    c.localGet(base).localGet(p).i32Add();
    if (extra !== undefined) c.localGet(extra).i32Add();
  };
  rowLoop(
    c,
    p,
    hb,
    () => {
      at(x);
      c.v128Load().localSet(x1);
      at(x, hb);
      c.v128Load().localSet(x2);
      // out_i = x1·cos_i + x2·sin_(i + own); out_(i + half) = x2·cos_(i + half) + x1·sin_(i + partner).
      at(o);
      c.localGet(x1);
      at(cr);
      c.v128Load().f32x4Mul().localGet(x2);
      at(sr, own);
      c.v128Load().f32x4Mul().f32x4Add().v128Store();
      at(o, hb);
      c.localGet(x2);
      at(cr, hb);
      c.v128Load().f32x4Mul().localGet(x1);
      at(sr, partner);
      c.v128Load().f32x4Mul().f32x4Add().v128Store();
    },
    () => {
      at(o);
      at(x);
      c.f32Load();
      at(cr);
      c.f32Load().f32Mul();
      at(x, hb);
      c.f32Load();
      at(sr, own);
      c.f32Load().f32Mul().f32Add().f32Store();
      at(o, hb);
      at(x, hb);
      c.f32Load();
      at(cr, hb);
      c.f32Load().f32Mul();
      at(x);
      c.f32Load();
      at(sr, partner);
      c.f32Load().f32Mul().f32Add().f32Store();
    },
  );
  for (const row of [x, o, cr, sr]) c.localGet(row).localGet(hb).i32Const(1).i32Shl().i32Add().localSet(row);
  c.localGet(t).i32Const(1).i32Add().localSet(t).br(0);
  c.end().end();
  c.localGet(h).i32Const(1).i32Add().localSet(h).br(0);
  c.end().end();
}

export function addRotary(m: ModuleBuilder): void {
  m.func([I32, I32, I32, I32, I32, I32, I32, I32], [], emitRotary, 'rotary');
}
