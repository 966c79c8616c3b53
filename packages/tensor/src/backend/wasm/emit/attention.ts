/**
 * Scaled dot-product attention forward for one (batch, head) and a range of query rows:
 *
 * `attn_fwd(qp, kp, vp, op, lp, sp, S, D, i0, i1, shift, mp, scale)`: q [T, D] at qp, k and v [S, D], out
 * [T, D] at op (rows i0 ≤ i < i1 written), the log-sum-exp of each score row at lp (T floats), scratch for
 * one score row at sp (S floats). Query i sees keys j < min(S, i + shift + 1, limit_i): shift = S − T is the
 * causal mask aligned bottom-right, shift ≥ S no causal mask; limit_i is int32 i at mp (a keep-mask whose
 * rows are prefixes), or no limit when mp < 0. A row that sees no key gets zeros and a log-sum-exp of
 * −Infinity. Each row: scores by SIMD dot products over D, exp(s − max) and their sum, then out = Σ p_j·v_j.
 * When D is a multiple of 4, keys go four at a time (see dot4) with the one-key path's arithmetic.
 */
import { type Code, F32, F64, I32, type ModuleBuilder, V128, type ValType } from '../builder.js';
import { emitExp, expTemps, horizontal, horizontalSumF64, lanes, loopWhile, rowLoop } from './common.js';

/** lim = min(lim, int32 row `row` at mp) when mp ≥ 0 (the rows' limits from a prefix keep-mask). */
function emitRowLimit(c: Code, mp: number, row: number, lim: number, tmp: number): void {
  c.localGet(mp).i32Const(0).i32GeS().if();
  c.localGet(mp).localGet(row).i32Const(2).i32Shl().i32Add().i32Load().localTee(tmp);
  c.localGet(lim).localGet(tmp).localGet(lim).i32LtS().select().localSet(lim);
  c.end();
}

/**
 * Four dot products over D (bytes db, a multiple of 16) of the row at x with the rows at ys, left as one
 * vector: lane u is x·ys[u], each row's lanes summed as `horizontal` sums them, (l0 + l1) + (l2 + l3), so
 * the four come out with the bits of four single dot products.
 */
function dot4(
  c: Code,
  x: number,
  ys: readonly number[],
  db: number,
  p: number,
  accs: readonly number[],
): void {
  const [a, b, cc, d] = accs;
  for (const acc of accs) c.f32x4SplatConst(0).localSet(acc);
  c.i32Const(0).localSet(p);
  loopWhile(c, p, db, 16, () => {
    ys.forEach((y, u) => {
      c.localGet(accs[u]).localGet(x).localGet(p).i32Add().v128Load();
      c.localGet(y).localGet(p).i32Add().v128Load().f32x4Mul().f32x4Add().localSet(accs[u]);
    });
  });
  // [a0 + a1, b0 + b1, a2 + a3, b2 + b3] and the same for c and d, then their halves added.
  const pairSum = (u: number, v: number, first: number[], second: number[]) => {
    c.localGet(u).localGet(v).i8x16Shuffle(lanes(first));
    c.localGet(u).localGet(v).i8x16Shuffle(lanes(second)).f32x4Add();
  };
  pairSum(a, b, [0, 4, 2, 6], [1, 5, 3, 7]);
  c.localSet(a);
  pairSum(cc, d, [0, 4, 2, 6], [1, 5, 3, 7]);
  c.localSet(cc);
  pairSum(a, cc, [0, 1, 4, 5], [2, 3, 6, 7]);
}

/** Four new locals of one type (the four keys' pointers or vectors). */
const four = (c: Code, type: ValType) => [c.local(type), c.local(type), c.local(type), c.local(type)];

/** keys4 = the keys taken four at a time: lim rounded down to a multiple of 4, or none unless D % 4 = 0. */
function emitKeys4(c: Code, lim: number, D: number, keys4: number): void {
  c.localGet(lim).i32Const(-4).i32And().i32Const(0);
  c.localGet(D).i32Const(3).i32And().i32Eqz().select().localSet(keys4);
}

function emitForward(c: Code, logFn: number): void {
  const [qp, kp, vp, op, lp, sp, S, D, i0, i1, shift, mp, scale] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const [i, j, p, db, lim, lb, q, k, o, m] = new Array(10).fill(0).map(() => c.local(I32));
  const [mx, s] = [c.local(F32), c.local(F32)];
  const sum = c.local(F64);
  const [vacc, vm, ve, vx] = [c.local(V128), c.local(V128), c.local(V128), c.local(V128)];
  const [keys4, bytes4] = [c.local(I32), c.local(I32)];
  const [k4, accs] = [four(c, I32), four(c, V128)];
  const tmp = expTemps(c);
  c.localGet(D).i32Const(2).i32Shl().localSet(db);
  c.localGet(i0).localSet(i);
  c.block().loop();
  c.localGet(i).localGet(i1).i32GeS().brIf(1);
  c.localGet(qp).localGet(i).localGet(db).i32Mul().i32Add().localSet(q);
  c.localGet(op).localGet(i).localGet(db).i32Mul().i32Add().localSet(o);
  // lim = clamp(i + shift + 1, 0, S) keys, at most the row's limit; lb = 4·lim bytes of scores.
  c.localGet(i).localGet(shift).i32Add().i32Const(1).i32Add().localTee(lim);
  c.localGet(S).localGet(lim).localGet(S).i32LtS().select().localSet(lim);
  c.localGet(lim).i32Const(0).localGet(lim).i32Const(0).i32GtS().select().localSet(lim);
  emitRowLimit(c, mp, i, lim, m);
  c.localGet(lim).i32Const(2).i32Shl().localSet(lb);

  // Scores s_j = scale·(q·k_j) into the scratch row, and their max: four keys at a time (one load of q
  // for four keys, one vector store), then the rest one by one; the same sums either way.
  emitKeys4(c, lim, D, keys4);
  c.localGet(kp).localSet(k);
  c.i32Const(0).localSet(j);
  c.f32x4SplatConst(Number.NEGATIVE_INFINITY).localSet(vm);
  loopWhile(c, j, keys4, 4, () => {
    for (const [u, ku] of k4.entries()) c.localGet(k).localGet(db).i32Const(u).i32Mul().i32Add().localSet(ku);
    dot4(c, q, k4, db, p, accs);
    // + 0 as the one-key path adds its (empty) scalar tail: a −0 sum becomes +0 there too.
    c.f32x4SplatConst(0).f32x4Add().localGet(scale).f32x4Splat().f32x4Mul().localSet(vx);
    c.localGet(sp).localGet(j).i32Const(2).i32Shl().i32Add().localGet(vx).v128Store();
    c.localGet(vm).localGet(vx).f32x4Max().localSet(vm);
    c.localGet(k).localGet(db).i32Const(2).i32Shl().i32Add().localSet(k);
  });
  horizontal(c, vm, (x) => x.f32Max());
  c.localSet(mx);
  loopWhile(c, j, lim, 1, () => {
    c.f32x4SplatConst(0).localSet(vacc);
    c.f32Const(0).localSet(s);
    rowLoop(
      c,
      p,
      db,
      () => {
        c.localGet(vacc).localGet(q).localGet(p).i32Add().v128Load();
        c.localGet(k).localGet(p).i32Add().v128Load().f32x4Mul().f32x4Add().localSet(vacc);
      },
      () => {
        c.localGet(s).localGet(q).localGet(p).i32Add().f32Load();
        c.localGet(k).localGet(p).i32Add().f32Load().f32Mul().f32Add().localSet(s);
      },
    );
    horizontal(c, vacc, (x) => x.f32Add());
    c.localGet(s).f32Add().localGet(scale).f32Mul().localSet(s);
    c.localGet(sp).localGet(j).i32Const(2).i32Shl().i32Add().localGet(s).f32Store();
    c.localGet(mx).localGet(s).f32Max().localSet(mx);
    c.localGet(k).localGet(db).i32Add().localSet(k);
  });
  c.localGet(mx).f32Const(Number.NEGATIVE_INFINITY).f32Eq().if().f32Const(0).localSet(mx).end();

  // p_j = exp(s_j − max) in place, and their sum.
  c.localGet(mx).f32x4Splat().localSet(vm);
  c.f32x4SplatConst(0).localSet(vacc);
  c.f64Const(0).localSet(sum);
  rowLoop(
    c,
    p,
    lb,
    () => {
      c.localGet(sp).localGet(p).i32Add().v128Load().localGet(vm).f32x4Sub().localSet(vx);
      emitExp(c, vx, tmp);
      c.localSet(ve);
      c.localGet(sp).localGet(p).i32Add().localGet(ve).v128Store();
      c.localGet(vacc).localGet(ve).f32x4Add().localSet(vacc);
    },
    () => {
      c.localGet(sp).localGet(p).i32Add().f32Load().localGet(mx).f32Sub().f32x4Splat().localSet(vx);
      emitExp(c, vx, tmp);
      c.f32x4ExtractLane(0).localSet(s);
      c.localGet(sp).localGet(p).i32Add().localGet(s).f32Store();
      c.localGet(sum).localGet(s).f64PromoteF32().f64Add().localSet(sum);
    },
  );
  c.localGet(sum);
  horizontalSumF64(c, vacc);
  c.f64Add().localSet(sum);

  // out = Σ_j p_j·v_j, then · 1/sum (zeros where no key is visible: sum = 0 and no term added).
  const zero = () => {
    rowLoop(
      c,
      p,
      db,
      () => c.localGet(o).localGet(p).i32Add().f32x4SplatConst(0).v128Store(),
      () => c.localGet(o).localGet(p).i32Add().f32Const(0).f32Store(),
    );
  };
  zero();
  c.localGet(vp).localSet(k);
  c.i32Const(0).localSet(j);
  // Four keys at a time: each out vector loaded and stored once for four terms, added in key order.
  c.localGet(keys4).i32Const(2).i32Shl().localSet(bytes4);
  loopWhile(c, j, bytes4, 16, () => {
    for (const [u, ku] of k4.entries()) {
      c.localGet(k).localGet(db).i32Const(u).i32Mul().i32Add().localSet(ku);
      c.localGet(sp)
        .localGet(j)
        .i32Add()
        .v128Load32Splat(4 * u)
        .localSet(accs[u]);
    }
    c.i32Const(0).localSet(p);
    loopWhile(c, p, db, 16, () => {
      c.localGet(o).localGet(p).i32Add();
      c.localGet(o).localGet(p).i32Add().v128Load();
      for (const [u, ku] of k4.entries())
        c.localGet(ku).localGet(p).i32Add().v128Load().localGet(accs[u]).f32x4Mul().f32x4Add();
      c.v128Store();
    });
    c.localGet(k).localGet(db).i32Const(2).i32Shl().i32Add().localSet(k);
  });
  loopWhile(c, j, lb, 4, () => {
    c.localGet(sp).localGet(j).i32Add().v128Load32Splat().localSet(ve);
    rowLoop(
      c,
      p,
      db,
      () => {
        c.localGet(o).localGet(p).i32Add();
        c.localGet(o).localGet(p).i32Add().v128Load();
        c.localGet(k).localGet(p).i32Add().v128Load().localGet(ve).f32x4Mul().f32x4Add().v128Store();
      },
      () => {
        c.localGet(o).localGet(p).i32Add();
        c.localGet(o).localGet(p).i32Add().f32Load();
        c.localGet(k).localGet(p).i32Add().f32Load().localGet(ve).f32x4ExtractLane(0).f32Mul();
        c.f32Add().f32Store();
      },
    );
    c.localGet(k).localGet(db).i32Add().localSet(k);
  });
  c.localGet(sum).f64Const(0).f64Gt().if();
  c.f64Const(1).localGet(sum).f64Div().f32DemoteF64().f32x4Splat().localSet(ve);
  rowLoop(
    c,
    p,
    db,
    () => {
      c.localGet(o).localGet(p).i32Add();
      c.localGet(o).localGet(p).i32Add().v128Load().localGet(ve).f32x4Mul().v128Store();
    },
    () => {
      c.localGet(o).localGet(p).i32Add();
      c.localGet(o).localGet(p).i32Add().f32Load().localGet(ve).f32x4ExtractLane(0).f32Mul().f32Store();
    },
  );
  c.localGet(lp).localGet(i).i32Const(2).i32Shl().i32Add();
  c.localGet(mx).f64PromoteF32().localGet(sum).call(logFn).f64Add().f32DemoteF64().f32Store();
  c.else();
  c.localGet(lp).localGet(i).i32Const(2).i32Shl().i32Add().f32Const(Number.NEGATIVE_INFINITY).f32Store();
  c.end();

  c.localGet(i).i32Const(1).i32Add().localSet(i).br(0);
  c.end().end();
}

export function addAttention(m: ModuleBuilder, logFn: number): void {
  m.func(
    [I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, F32],
    [],
    (c) => emitForward(c, logFn),
    'attn_fwd',
  );
}

/**
 * Attention backward for the query rows of one (batch, kv head) group:
 *
 * `attn_bwd(qb, qs, kb, ks, lp, rows, T, S, D, shift, mp, scale)`: q, out, dout and dq are four [rows, D]
 * blocks `qs` bytes apart starting at qb (the group's query heads are consecutive rows, row r being query
 * r mod T); k, v, dk, dv four [S, D] blocks `ks` bytes apart from kb; lp the rows' log-sum-exp; mp the rows'
 * key limits (int32, or mp < 0 for none) as in the forward. dq is overwritten, dk and dv accumulated (the
 * caller zeroes them; one call owns a kv head, so no two threads share one). Per row, one pass over the
 * visible keys: p = exp(scale·q·k − lse), dp = dout·v, ds = p·(dp − dout·out)·scale, dq += ds·k,
 * dk += ds·q, dv += p·dout.
 */
function emitBackward(c: Code): void {
  const [qb, qs, kb, ks, lp, rows, T, S, D, shift, mp, scale] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
  const [r, j, p, db, lim, q, o, g, dq, k, v, dk, dv, m] = new Array(14).fill(0).map(() => c.local(I32));
  const [lse, delta, s, pj, ds] = new Array(5).fill(0).map(() => c.local(F32));
  const [va, vb, vx, vp] = new Array(4).fill(0).map(() => c.local(V128));
  const keys4 = c.local(I32);
  const [k4, v4, dk4, dv4] = [four(c, I32), four(c, I32), four(c, I32), four(c, I32)];
  const [accs, dsv, pv] = [four(c, V128), four(c, V128), four(c, V128)];
  const tmp = expTemps(c);
  const at = (base: number) => c.localGet(base).localGet(p).i32Add();
  /** Dot product of two D-rows into f32 local `out`. */
  const dot = (x: number, y: number, out: number) => {
    c.f32x4SplatConst(0).localSet(va);
    c.f32Const(0).localSet(out);
    rowLoop(
      c,
      p,
      db,
      () => {
        c.localGet(va);
        at(x).v128Load();
        at(y).v128Load().f32x4Mul().f32x4Add().localSet(va);
      },
      () => {
        c.localGet(out);
        at(x).f32Load();
        at(y).f32Load().f32Mul().f32Add().localSet(out);
      },
    );
    horizontal(c, va, (z) => z.f32Add());
    c.localGet(out).f32Add().localSet(out);
  };
  /** dst row += factor · src row. */
  const axpy = (dst: number, src: number, factor: number) => {
    c.localGet(factor).f32x4Splat().localSet(vb);
    rowLoop(
      c,
      p,
      db,
      () => {
        at(dst);
        at(dst).v128Load();
        at(src).v128Load().localGet(vb).f32x4Mul().f32x4Add().v128Store();
      },
      () => {
        at(dst);
        at(dst).f32Load();
        at(src).f32Load().localGet(factor).f32Mul().f32Add().f32Store();
      },
    );
  };
  c.localGet(D).i32Const(2).i32Shl().localSet(db);
  c.i32Const(0).localSet(r);
  c.block().loop();
  c.localGet(r).localGet(rows).i32GeS().brIf(1);
  c.localGet(qb).localGet(r).localGet(db).i32Mul().i32Add().localTee(q);
  c.localGet(qs).i32Add().localTee(o).localGet(qs).i32Add().localTee(g).localGet(qs).i32Add().localSet(dq);
  c.localGet(lp).localGet(r).i32Const(2).i32Shl().i32Add().f32Load().localSet(lse);
  // dq row = 0
  rowLoop(
    c,
    p,
    db,
    () => at(dq).f32x4SplatConst(0).v128Store(),
    () => at(dq).f32Const(0).f32Store(),
  );
  // A row that sees no key (lse = −Infinity) has no gradient.
  c.localGet(lse).f32Const(Number.NEGATIVE_INFINITY).f32Eq().i32Eqz().if();
  dot(g, o, delta);
  // lim = clamp(i + shift + 1, 0, S) with i = r mod T (rem via r − T·(r / T)).
  c.localGet(r).localGet(r).localGet(T).i32DivS().localGet(T).i32Mul().i32Sub();
  c.localGet(shift).i32Add().i32Const(1).i32Add().localTee(lim);
  c.localGet(S).localGet(lim).localGet(S).i32LtS().select().localSet(lim);
  c.localGet(lim).i32Const(0).localGet(lim).i32Const(0).i32GtS().select().localSet(lim);
  emitRowLimit(c, mp, r, lim, m);
  c.localGet(kb).localSet(k);
  c.localGet(kb).localGet(ks).i32Add().localTee(v).localGet(ks).i32Add().localTee(dk);
  c.localGet(ks).i32Add().localSet(dv);
  c.i32Const(0).localSet(j);
  // Four keys at a time: the dot products and exp as vectors, dq loaded and stored once for four terms
  // (added in key order), q and dout loaded once for four dk and dv rows; then the rest one by one. Each
  // lane's arithmetic is the one-key path's, so the bits are too.
  emitKeys4(c, lim, D, keys4);
  loopWhile(c, j, keys4, 4, () => {
    for (let u = 0; u < 4; u++)
      for (const [base, row] of [
        [k, k4[u]],
        [v, v4[u]],
        [dk, dk4[u]],
        [dv, dv4[u]],
      ])
        c.localGet(base).localGet(db).i32Const(u).i32Mul().i32Add().localSet(row);
    // + 0 as the one-key path adds its (empty) scalar tail.
    dot4(c, q, k4, db, p, accs);
    c.f32x4SplatConst(0).f32x4Add().localGet(scale).f32x4Splat().f32x4Mul();
    c.localGet(lse).f32x4Splat().f32x4Sub().localSet(vx);
    emitExp(c, vx, tmp);
    c.localSet(vp);
    dot4(c, g, v4, db, p, accs);
    c.f32x4SplatConst(0).f32x4Add().localGet(delta).f32x4Splat().f32x4Sub().localSet(vx);
    c.localGet(vp).localGet(vx).f32x4Mul().localGet(scale).f32x4Splat().f32x4Mul().localSet(vx);
    for (let u = 0; u < 4; u++) {
      c.localGet(vx)
        .localGet(vx)
        .i8x16Shuffle(lanes([u, u, u, u]))
        .localSet(dsv[u]);
      c.localGet(vp)
        .localGet(vp)
        .i8x16Shuffle(lanes([u, u, u, u]))
        .localSet(pv[u]);
    }
    c.i32Const(0).localSet(p);
    loopWhile(c, p, db, 16, () => {
      at(dq);
      at(dq).v128Load();
      for (let u = 0; u < 4; u++) at(k4[u]).v128Load().localGet(dsv[u]).f32x4Mul().f32x4Add();
      c.v128Store();
      for (let u = 0; u < 4; u++) {
        at(dk4[u]);
        at(dk4[u]).v128Load();
        at(q).v128Load().localGet(dsv[u]).f32x4Mul().f32x4Add().v128Store();
        at(dv4[u]);
        at(dv4[u]).v128Load();
        at(g).v128Load().localGet(pv[u]).f32x4Mul().f32x4Add().v128Store();
      }
    });
    for (const x of [k, v, dk, dv]) c.localGet(x).localGet(db).i32Const(2).i32Shl().i32Add().localSet(x);
  });
  loopWhile(c, j, lim, 1, () => {
    dot(q, k, s);
    // p = exp(scale·s − lse), through the vector exp on one lane.
    c.localGet(s).localGet(scale).f32Mul().localGet(lse).f32Sub().f32x4Splat().localSet(vx);
    emitExp(c, vx, tmp);
    c.localSet(vp);
    c.localGet(vp).f32x4ExtractLane(0).localSet(pj);
    dot(g, v, s);
    c.localGet(pj).localGet(s).localGet(delta).f32Sub().f32Mul().localGet(scale).f32Mul().localSet(ds);
    axpy(dq, k, ds);
    axpy(dk, q, ds);
    axpy(dv, g, pj);
    for (const x of [k, v, dk, dv]) c.localGet(x).localGet(db).i32Add().localSet(x);
  });
  c.end();
  c.localGet(r).i32Const(1).i32Add().localSet(r).br(0);
  c.end().end();
}

export function addAttentionBackward(m: ModuleBuilder): void {
  m.func([I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, F32], [], emitBackward, 'attn_bwd');
}
