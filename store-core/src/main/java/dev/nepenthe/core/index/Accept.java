package dev.nepenthe.core.index;

import java.util.Arrays;
import java.util.NoSuchElementException;
import java.util.PrimitiveIterator;

/**
 * Which ordinals a search may return, in the spirit of Lucene's {@code Bits}: the collection hands
 * an index the records a request's tenant, subject and filters allow (a bitmap), a caller may hand
 * a sorted set of ordinals or {@link #ALL}. Indexes test candidates with {@link #accepts}; when few
 * ordinals are accepted they may score exactly those, in ascending order, instead of walking their
 * structure.
 */
public interface Accept {

    /**
     * Every ordinal; indexes check for it with {@link #isAll()} and skip the per-candidate test.
     */
    Accept ALL =
            new Accept() {
                @Override
                public boolean accepts(int ordinal) {
                    return true;
                }

                @Override
                public boolean isAll() {
                    return true;
                }

                @Override
                public long cardinality() {
                    return -1;
                }

                @Override
                public PrimitiveIterator.OfInt ordinals() {
                    throw new UnsupportedOperationException(
                            "Accept.ALL does not enumerate its ordinals; check cardinality()"
                                    + " first");
                }

                @Override
                public String toString() {
                    return "Accept.ALL";
                }
            };

    /**
     * Whether a search may return this ordinal. Cheap: it is called for every candidate.
     *
     * @param ordinal a candidate's ordinal
     * @return true if the search may return it
     */
    boolean accepts(int ordinal);

    /**
     * Whether this is {@link #ALL}, so an index may skip the per-candidate test. An accept that
     * happens to accept every live ordinal still answers false: only {@link #ALL} answers true.
     *
     * @return true for {@link #ALL} only
     */
    default boolean isAll() {
        return false;
    }

    /**
     * How many ordinals are accepted.
     *
     * @return the count, or -1 when that is unknown or unbounded (then {@link #ordinals} is not
     *     available)
     */
    long cardinality();

    /**
     * The accepted ordinals in ascending order.
     *
     * @return an iterator over them, each once
     * @throws UnsupportedOperationException when {@link #cardinality()} is -1
     */
    PrimitiveIterator.OfInt ordinals();

    /**
     * The given ordinals (copied and sorted; duplicates are harmless). Costs a sort up front and a
     * binary search per {@link #accepts} call.
     *
     * @param ordinals the ordinals a search may return
     * @return an accept over exactly those ordinals
     */
    static Accept of(int... ordinals) {
        int[] sorted = ordinals.clone();
        Arrays.sort(sorted);
        int n = 0;
        for (int i = 0; i < sorted.length; i++) {
            if (i == 0 || sorted[i] != sorted[i - 1]) {
                sorted[n++] = sorted[i];
            }
        }
        int[] set = Arrays.copyOf(sorted, n);
        return new Accept() {
            @Override
            public boolean accepts(int ordinal) {
                return Arrays.binarySearch(set, ordinal) >= 0;
            }

            @Override
            public long cardinality() {
                return set.length;
            }

            @Override
            public PrimitiveIterator.OfInt ordinals() {
                return new PrimitiveIterator.OfInt() {
                    int i;

                    @Override
                    public boolean hasNext() {
                        return i < set.length;
                    }

                    @Override
                    public int nextInt() {
                        if (i >= set.length) {
                            throw new NoSuchElementException();
                        }
                        return set[i++];
                    }
                };
            }
        };
    }
}
