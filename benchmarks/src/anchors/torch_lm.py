#!/usr/bin/python3
"""
PyTorch anchor for benchmarks/src/lm.ts: the same model (dModel 64, 2 layers, 4 heads / 2 kv heads, SwiGLU
with 176 hidden units, RMSNorm, RoPE, tied embeddings, vocab 4096; 354,624 parameters) and the same work, in
plain torch on one thread:

    /usr/bin/python3 benchmarks/src/anchors/torch_lm.py [--train-steps 5] [--gen-reps 3] [--threads 1]

- training: forward + cross-entropy + backward + AdamW on 8x128 random tokens, median step after 2 warm-ups;
- generation with a preallocated KV cache, batch 1 and 8, a 32-token prompt and 64 new tokens sampled at
  temperature 1 (softmax + multinomial), median of the reps after three warm-ups, prefill included.

Prints one JSON object: {"torch": version, "threads": n, "trainMs": ..., "gen": {"1": ms, "8": ms}}.
lm.ts runs this when `/usr/bin/python3` has torch (Debian: apt-get install -y python3-torch); nothing in the
packages needs it.
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F

V, D, L, H, HKV, HID, MAXLEN = 4096, 64, 2, 4, 2, 176, 512
HD = D // H


class RMSNorm(torch.nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables():
    inv = 1.0 / (10000 ** (torch.arange(0, HD, 2).float() / HD))
    ang = torch.outer(torch.arange(MAXLEN).float(), inv)
    return ang.cos(), ang.sin()


COS, SIN = rope_tables()


def rope(x, pos):  # x [B, h, T, HD], pos [T]
    c, s = COS[pos], SIN[pos]
    x1, x2 = x[..., : HD // 2], x[..., HD // 2 :]
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], -1)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n1, self.n2 = RMSNorm(D), RMSNorm(D)
        self.q = torch.nn.Linear(D, H * HD, bias=False)
        self.k = torch.nn.Linear(D, HKV * HD, bias=False)
        self.v = torch.nn.Linear(D, HKV * HD, bias=False)
        self.o = torch.nn.Linear(H * HD, D, bias=False)
        self.gate = torch.nn.Linear(D, HID, bias=False)
        self.up = torch.nn.Linear(D, HID, bias=False)
        self.down = torch.nn.Linear(HID, D, bias=False)

    def forward(self, x, start, cache=None):
        B, T, _ = x.shape
        h = self.n1(x)
        pos = torch.arange(start, start + T)
        q = rope(self.q(h).view(B, T, H, HD).transpose(1, 2), pos)
        k = rope(self.k(h).view(B, T, HKV, HD).transpose(1, 2), pos)
        v = self.v(h).view(B, T, HKV, HD).transpose(1, 2)
        if cache is not None:
            ck, cv = cache
            ck[:, :, start : start + T] = k
            cv[:, :, start : start + T] = v
            k, v = ck[:, :, : start + T], cv[:, :, : start + T]
        k = k.repeat_interleave(H // HKV, 1)
        v = v.repeat_interleave(H // HKV, 1)
        S = k.shape[2]
        att = (q @ k.transpose(-1, -2)) / HD**0.5
        if T > 1:
            mask = torch.ones(T, S, dtype=torch.bool).tril(S - T)
            att = att.masked_fill(~mask, float("-inf"))
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
        x = x + self.o(y)
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class LM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(V, D)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(L))
        self.norm = RMSNorm(D)

    def forward(self, ids, start=0, caches=None):
        x = self.embed(ids)
        for i, b in enumerate(self.blocks):
            x = b(x, start, caches[i] if caches else None)
        return self.norm(x) @ self.embed.weight.t()


def median(xs):
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def timed(warmup, reps, fn):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train-steps", type=int, default=5)
    p.add_argument("--gen-reps", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = LM()
    assert sum(t.numel() for t in model.parameters()) == 354624
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        batch = torch.randint(0, V, (8, 129))
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), batch[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.item()

    step()
    train_ms = timed(1, a.train_steps, step)
    model.eval()

    def gen(B):
        prompt = torch.randint(0, V, (B, 32))

        def run():
            with torch.no_grad():
                caches = [(torch.zeros(B, HKV, MAXLEN, HD), torch.zeros(B, HKV, MAXLEN, HD)) for _ in range(L)]
                logits = model(prompt, 0, caches)[:, -1]
                n = 32
                for _ in range(64):
                    tok = torch.multinomial(logits.softmax(-1), 1)
                    logits = model(tok, n, caches)[:, -1]
                    n += 1

        return timed(3, a.gen_reps, run)

    out = {"torch": torch.__version__, "threads": a.threads, "trainMs": train_ms, "gen": {"1": gen(1), "8": gen(8)}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
