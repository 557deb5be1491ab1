package dev.nepenthe.core.forget;

/**
 * The store's rule for the verification probe: a surviving record whose vector has cosine at or
 * above {@code threshold} to a forgotten one is a suspect, and the operation cannot seal until
 * an operator looks at it. The rule belongs to the store, not to the caller: a request may only
 * tighten it (a lower threshold, down to {@code lowest}), never loosen it, since a request at
 * 1.0 would switch the probe off and one near 0 would flood review with every record until an
 * override waved them all through.
 *
 * @param threshold the store's threshold, in (0, 1): 1.0 would flag only exact copies
 * @param lowest the lowest threshold a request may ask for, in (0, threshold]
 */
public record ProbePolicy(double threshold, double lowest) {

    /** Suspects at cosine 0.85 and above; requests may go down to 0.5. */
    public static final ProbePolicy DEFAULT = new ProbePolicy(0.85, 0.5);

    /**
     * Checks the policy.
     *
     * @throws IllegalArgumentException if the threshold is not in (0, 1) or {@code lowest} not
     *     in (0, threshold], NaN included
     */
    public ProbePolicy {
        if (!(threshold > 0 && threshold < 1)) {
            throw new IllegalArgumentException("probe policy threshold: expected a cosine in (0, 1) (1.0 flags only exact"
                    + " copies, which switches the probe off), got " + threshold);
        }
        if (!(lowest > 0 && lowest <= threshold)) {
            throw new IllegalArgumentException("probe policy lowest threshold: expected a cosine in (0, " + threshold
                    + "], got " + lowest);
        }
    }

    /**
     * The threshold an operation runs with: the policy's when the request names none, else the
     * request's, which must lie in [{@code lowest}, {@code threshold}].
     *
     * @param requested the request's threshold, or null
     * @return the threshold the verification probe runs with
     * @throws IllegalArgumentException naming the policy, for NaN, out-of-range or loosening values
     */
    public double effective(Double requested) {
        if (requested == null) {
            return threshold;
        }
        double r = requested;
        if (Double.isNaN(r) || r > threshold || r < lowest) {
            throw new IllegalArgumentException("forget request probe threshold: expected a cosine from " + lowest + " to "
                    + threshold + " (the store's probe policy; a request may tighten it, never loosen it), got " + r);
        }
        return r;
    }
}
