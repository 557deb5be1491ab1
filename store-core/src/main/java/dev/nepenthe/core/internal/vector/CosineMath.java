package dev.nepenthe.core.internal.vector;

/** Shared final step of the cosine kernels, so both implementations agree on edge cases. */
final class CosineMath {
    private CosineMath() {}

    /** Cosine from dot product and squared norms; 0 when either norm is zero. */
    static float fromParts(float ab, float aa, float bb) {
        if (aa == 0f || bb == 0f) {
            return 0f;
        }
        // Double for the root and division: the squared norms of large-magnitude vectors can
        // be near Float.MAX_VALUE, and their product would overflow in float.
        double c = ab / (Math.sqrt((double) aa) * Math.sqrt((double) bb));
        return (float) Math.max(-1.0, Math.min(1.0, c));
    }
}
