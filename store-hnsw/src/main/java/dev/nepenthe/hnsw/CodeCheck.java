package dev.nepenthe.hnsw;

import static dev.nepenthe.hnsw.HnswIntegrityChecker.CODE_MISMATCH;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.CODE_NOT_ZEROED;

import dev.nepenthe.core.index.IntegrityReport;

/**
 * Recomputes live slots' codes from their stored vectors and compares them byte for byte, padding
 * and corrections included. Cost per slot: one encoding (two passes over the vector).
 */
final class CodeCheck {
    private final HnswGraph g;
    private final Int8Codes codec;
    private final IntegrityReport.Builder r;
    private final byte[] expected;
    private final byte[] stored;
    private final float[] vector;
    long recomputed;

    private CodeCheck(HnswGraph g, Int8Codes codec, IntegrityReport.Builder r) {
        this.g = g;
        this.codec = codec;
        this.r = r;
        this.expected = new byte[codec.stride()];
        this.stored = new byte[codec.stride()];
        this.vector = new float[g.dim];
    }

    /** Null for a graph without codes; else declares the code violations in the report. */
    static CodeCheck of(HnswGraph g, IntegrityReport.Builder r) {
        Int8Codes codec = g.store().codec();
        if (codec == null) {
            return null;
        }
        r.expect(CODE_MISMATCH);
        r.expect(CODE_NOT_ZEROED);
        return new CodeCheck(g, codec, r);
    }

    void check(int s) {
        recomputed++;
        g.store().copyVector(s, vector);
        codec.encode(vector, 0, expected, 0);
        g.store().copyCode(s, stored);
        for (int i = 0; i < expected.length; i++) {
            if (stored[i] != expected[i]) {
                r.violation(
                        CODE_MISMATCH,
                        "slot "
                                + s
                                + " (ordinal "
                                + g.ordinal(s)
                                + "): code byte "
                                + i
                                + " is "
                                + stored[i]
                                + ", its vector codes to "
                                + expected[i]);
                return;
            }
        }
    }
}
