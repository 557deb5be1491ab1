package dev.nepenthe.core.forget;

/**
 * The store's rule for the verification probe: a surviving record whose vector has cosine at or
 * above {@code threshold} to a forgotten one is a suspect, and the operation cannot seal until an
 * operator looks at it. The rule belongs to the store, not to the caller: a request may only
 * tighten it (a lower threshold, down to {@code lowest}), never loosen it, since a request at 1.0
 * would switch the probe off and one near 0 would flood review with every record until an override
 * waved them all through.
 *
 * <p>The probe is exact (every forgotten vector against every survivor of the tenant) in a
 * collection where the tenant has at most {@code approximateAbove} records; above that, in a cosine
 * collection whose index is approximate (HNSW, IVF-PQ), it searches the collection's own index for
 * each forgotten vector, with a wide beam, and scores what it finds exactly. The receipt and the
 * evidence say which probe ran where, with its parameters; a request may force the exact probe
 * everywhere ({@link ForgetRequest#withExactProbe()}), never the reverse.
 *
 * @param threshold the store's threshold, in (0, 1): 1.0 would flag only exact copies
 * @param lowest the lowest threshold a request may ask for, in (0, threshold]
 * @param approximateAbove records of the tenant in a collection above which the probe there goes
 *     through the index, 1 or more; {@link Integer#MAX_VALUE} keeps it exact everywhere
 */
public record ProbePolicy(double threshold, double lowest, int approximateAbove) {

    /**
     * The tenant size above which the probe goes through the index by default. Why there: below it
     * the exact probe misses nothing and costs a few milliseconds per forgotten vector; above it
     * that cost grows with the tenant, while one search of an approximate index at the probe's beam
     * grows with the logarithm of the size. The measurements behind the choice are in
     * docs/BENCHMARKS.md (the forget and HNSW sections).
     */
    public static final int DEFAULT_APPROXIMATE_ABOVE = 100_000;

    /**
     * Suspects at cosine 0.85 and above; requests may go down to 0.5; approximate above 100,000
     * records.
     */
    public static final ProbePolicy DEFAULT = new ProbePolicy(0.85, 0.5);

    /**
     * A policy that approximates above {@link #DEFAULT_APPROXIMATE_ABOVE} records.
     *
     * @param threshold the store's threshold, in (0, 1)
     * @param lowest the lowest threshold a request may ask for, in (0, threshold]
     * @throws IllegalArgumentException as the canonical constructor does
     */
    public ProbePolicy(double threshold, double lowest) {
        this(threshold, lowest, DEFAULT_APPROXIMATE_ABOVE);
    }

    /**
     * This policy with another tenant size above which the probe goes through the index.
     *
     * @param records records of the tenant in a collection, 1 or more ({@link Integer#MAX_VALUE}:
     *     never)
     * @return a new policy
     * @throws IllegalArgumentException if {@code records} is below 1
     */
    public ProbePolicy withApproximateAbove(int records) {
        return new ProbePolicy(threshold, lowest, records);
    }

    /**
     * Checks the policy.
     *
     * @throws IllegalArgumentException if the threshold is not in (0, 1), {@code lowest} not in (0,
     *     threshold], NaN included, or {@code approximateAbove} below 1
     */
    public ProbePolicy {
        if (!(threshold > 0 && threshold < 1)) {
            throw new IllegalArgumentException(
                    "probe policy threshold: expected a cosine in (0, 1) (1.0 flags only exact"
                            + " copies, which switches the probe off), got "
                            + threshold);
        }
        if (!(lowest > 0 && lowest <= threshold)) {
            throw new IllegalArgumentException(
                    "probe policy lowest threshold: expected a cosine in (0, "
                            + threshold
                            + "], got "
                            + lowest);
        }
        if (approximateAbove < 1) {
            throw new IllegalArgumentException(
                    "probe policy approximateAbove: expected 1 or more records (Integer.MAX_VALUE"
                            + " for an exact probe everywhere), got "
                            + approximateAbove);
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
            throw new IllegalArgumentException(
                    "forget request probe threshold: expected a cosine from "
                            + lowest
                            + " to "
                            + threshold
                            + " (the store's probe policy; a request may tighten it, never loosen"
                            + " it), got "
                            + r);
        }
        return r;
    }
}
