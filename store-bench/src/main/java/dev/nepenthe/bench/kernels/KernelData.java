package dev.nepenthe.bench.kernels;

import java.util.SplittableRandom;

/** Seeded benchmark inputs: the same numbers in every fork and on every machine. */
final class KernelData {
    private KernelData() {}

    /** Uniform floats in [-1, 1). */
    static float[] uniform(SplittableRandom rnd, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (rnd.nextDouble() * 2 - 1);
        }
        return v;
    }
}
