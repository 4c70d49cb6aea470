// The Mersenne Twister exactly as numpy's legacy RandomState runs it (np.random.seed + randint),
// so our bootstrap draws the same indices as verl's `bootstrap_metric`.
const N = 624;
const M = 397;

export class MT19937 {
  private readonly state = new Uint32Array(N);
  private pos = N;

  /** numpy's `mt19937_seed` (Matsumoto–Nishimura init_genrand). */
  constructor(seed: number) {
    let s = seed >>> 0;
    for (let i = 0; i < N; i++) {
      this.state[i] = s;
      s = (Math.imul(1812433253, s ^ (s >>> 30)) + i + 1) >>> 0;
    }
  }

  nextUint32(): number {
    if (this.pos >= N) this.twist();
    let y = this.state[this.pos++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /**
   * An integer in [0, high) as legacy `RandomState.randint(0, high)`: draw 32 bits, keep the
   * smallest covering bit mask, reject values above the range. No draw at all when high is 1.
   */
  randint(high: number): number {
    if (!Number.isInteger(high) || high < 1 || high > 0x100000000) throw new Error(`randint: bad bound ${high}`);
    const rng = high - 1;
    if (rng === 0) return 0;
    if (rng === 0xffffffff) return this.nextUint32();
    let mask = rng;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    for (;;) {
      const v = (this.nextUint32() & mask) >>> 0;
      if (v <= rng) return v;
    }
  }

  private twist(): void {
    const mt = this.state;
    for (let i = 0; i < N; i++) {
      const y = (mt[i] & 0x80000000) | (mt[(i + 1) % N] & 0x7fffffff);
      mt[i] = (mt[(i + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
    }
    this.pos = 0;
  }
}
