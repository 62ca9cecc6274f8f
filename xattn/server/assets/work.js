// xattn: a join's small proof of work (xattn/classroom/codes.py, work_done): for each of
// `pieces` pieces i a nonce n such that SHA-256 of "challenge.i.n" (of "challenge.n" for one
// piece) starts with `bits` zero bits, found a slice at a time so the page stays responsive. Plain JavaScript: a lecture hall's page is often plain http://, where
// crypto.subtle does not exist.
"use strict";
const XATTN_WORK = (function () {   // eslint-disable-line no-unused-vars -- read by phone.js and token.js
  const K = new Int32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]);
  const H = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
    0x5be0cd19];
  const W = new Int32Array(64);

  // SHA-256 of the first n bytes of m (padded in place: m has room for it)
  const h = new Int32Array(8);
  function digest(m, n) {
    const total = ((n + 72) >> 6) << 6;
    m.fill(0, n, total);
    m[n] = 0x80;
    const bits = n * 8;
    m[total - 4] = bits >>> 24; m[total - 3] = (bits >>> 16) & 255;
    m[total - 2] = (bits >>> 8) & 255; m[total - 1] = bits & 255;
    for (let i = 0; i < 8; i++) h[i] = H[i];
    for (let off = 0; off < total; off += 64) {
      for (let i = 0; i < 16; i++) {
        const j = off + 4 * i;
        W[i] = (m[j] << 24) | (m[j + 1] << 16) | (m[j + 2] << 8) | m[j + 3];
      }
      for (let i = 16; i < 64; i++) {
        const x = W[i - 15], y = W[i - 2];
        W[i] = (W[i - 16] + (((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3))
          + W[i - 7] + (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10))) | 0;
      }
      let a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
      for (let i = 0; i < 64; i++) {
        const t1 = (k + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7)))
          + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
        const t2 = ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10)))
          + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        k = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      h[0] = (h[0] + a) | 0; h[1] = (h[1] + b) | 0; h[2] = (h[2] + c) | 0; h[3] = (h[3] + d) | 0;
      h[4] = (h[4] + e) | 0; h[5] = (h[5] + f) | 0; h[6] = (h[6] + g) | 0; h[7] = (h[7] + k) | 0;
    }
    return h;
  }
  function bytes(text, extra) {               // an ASCII string, with room to pad it
    const m = new Uint8Array(((text.length + extra + 72) >> 6) << 6);
    for (let i = 0; i < text.length; i++) m[i] = text.charCodeAt(i);
    return m;
  }
  const hex = (text) => Array.from(digest(bytes(text, 0), text.length),
    (w) => (w >>> 0).toString(16).padStart(8, "0")).join("");

  // one piece: calls done(n) once found; slices of `step` hashes, the page free in between
  function piece(prefix, bits, step, done) {
    const m = bytes(prefix, 12), p = prefix.length;
    const digits = new Uint8Array(12);
    const limit = bits === 0 ? 0 : 32 - bits;
    let n = 0;
    (function more() {
      for (const end = n + step; n < end; n++) {
        let len = 0;
        for (let v = n; ; v = Math.floor(v / 10)) { digits[len++] = 48 + (v % 10); if (v < 10) break; }
        for (let i = 0; i < len; i++) m[p + i] = digits[len - 1 - i];
        const w = digest(m, p + len)[0];
        if (bits === 0 || (w >>> limit) === 0) { done(n); return; }
      }
      setTimeout(more, 0);
    })();
  }

  // calls done("n0,n1,...") once every piece is found
  function solve(challenge, bits, pieces, done, slice) {
    const found = [];
    (function next() {
      if (found.length === pieces) { done(found.join(",")); return; }
      const prefix = (pieces === 1 ? challenge : challenge + "." + found.length) + ".";
      piece(prefix, bits, slice || 20000, (n) => { found.push(String(n)); next(); });
    })();
  }
  return { hex, solve };
})();
