package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import java.util.function.Function;
import org.roaringbitmap.RoaringBitmap;

/**
 * The two tries {@link MetadataIndex} keeps numbers in, so that a range or a comparison is a union
 * of whole buckets answered from the keyed hashes like an equality. A number is kept under the
 * buckets of a trie over its 64-bit sortable form, four bits a level (16 levels, the finest the
 * value itself; a range takes at most 30 buckets a level). Two tries, since no 64 bits order every
 * long and double exactly: longs (with the doubles that equal a long), and the other doubles
 * (fractions, and magnitudes of 2^63 and beyond).
 */
final class NumberTrie {
    static final int STEP = 4;
    static final int LEVELS = 64 / STEP;

    /** Longs, and the doubles that equal a long. */
    static final NumberTrie LONGS = new NumberTrie("metadata-order-long-");

    /** The other doubles. */
    static final NumberTrie DOUBLES = new NumberTrie("metadata-order-double-");

    /** 2^63: doubles from -2^63 up to here that are whole numbers are exactly longs. */
    private static final double TWO_63_DOUBLE = 0x1p63;

    /** The keyed-hash kind of each level's buckets, finest first. */
    private final String[] levels = new String[LEVELS];

    /** The keyed-hash kind of the key every value of the trie is also kept under. */
    private final String any;

    private NumberTrie(String kind) {
        for (int j = 0; j < LEVELS; j++) {
            levels[j] = kind + j;
        }
        this.any = kind + "any";
    }

    /** The keyed-hash kind of level {@code j}'s buckets (0 is the finest). */
    String level(int j) {
        return levels[j];
    }

    /** The keyed-hash kind of the key every value of the trie is also kept under. */
    String any() {
        return any;
    }

    /**
     * A number's trie and its place there: longs and whole doubles within a long's range (-0.0
     * becomes 0) in the long trie, other doubles in the double trie; null for NaN or a kind of
     * number {@link Filter} does not compare. A record's chain and a filter's value key both come
     * from here, so 3 and 3.0 land in one bucket.
     */
    record Place(NumberTrie trie, long bits) {
        static Place of(Number n) {
            if (n instanceof Long
                    || n instanceof Integer
                    || n instanceof Short
                    || n instanceof Byte) {
                return new Place(LONGS, sortableLong(n.longValue()));
            }
            if (n instanceof Double || n instanceof Float) {
                double d = n.doubleValue();
                if (Double.isNaN(d)) {
                    return null;
                }
                return isLong(d)
                        ? new Place(LONGS, sortableLong((long) d))
                        : new Place(DOUBLES, sortableDouble(d));
            }
            return null;
        }
    }

    /** A long in unsigned order: flipping the sign bit makes signed order unsigned. */
    private static long sortableLong(long l) {
        return l ^ Long.MIN_VALUE;
    }

    /** A double's bits in unsigned order (finite or infinite, not NaN; -0.0 below 0.0). */
    private static long sortableDouble(double d) {
        long bits = Double.doubleToRawLongBits(d);
        return bits < 0 ? ~bits : bits ^ Long.MIN_VALUE;
    }

    /** Whether a double equals a long (a whole number from -2^63 up to, not including, 2^63). */
    private static boolean isLong(double d) {
        return d == Math.rint(d) && d >= -TWO_63_DOUBLE && d < TWO_63_DOUBLE;
    }

    /**
     * The key every value of this trie at {@code name} is also kept under: a query skips a trie
     * that holds nothing at the key (most keys hold longs only) rather than hash its buckets.
     */
    private MetadataIndex.Key anyKey(KeyedHash hashes, String name) {
        long[] one = new long[2];
        hashes.prefix(any, name, one, 0);
        return new MetadataIndex.Key(one[0], one[1]);
    }

    /**
     * The records whose value at {@code name} lies in the sortable interval [{@code lo}, {@code
     * hi}] (unsigned) of one trie: the interval cut into whole buckets, the widest that fit first.
     */
    private RoaringBitmap inOrder(
            KeyedHash hashes,
            String name,
            long lo,
            long hi,
            Function<MetadataIndex.Key, RoaringBitmap> view) {
        RoaringBitmap out = new RoaringBitmap();
        long[] one = new long[2];
        long cur = lo;
        while (Long.compareUnsigned(cur, hi) <= 0) {
            int j = 0;
            // Widen while cur is aligned to the next level and its bucket there ends within hi.
            while (j + 1 < LEVELS) {
                int bits = STEP * (j + 1);
                long width = 1L << bits;
                if ((cur & (width - 1)) != 0
                        || Long.compareUnsigned(cur + (width - 1), hi) > 0
                        || Long.compareUnsigned(cur + (width - 1), cur) < 0) {
                    break;
                }
                j++;
            }
            hashes.prefix(levels[j], name, cur >>> (STEP * j), one, 0);
            RoaringBitmap b = view.apply(new MetadataIndex.Key(one[0], one[1]));
            if (b != null) {
                out.or(b);
            }
            long next = cur + (1L << (STEP * j));
            if (Long.compareUnsigned(next, cur) <= 0) {
                break; // the bucket ended at the top of the space
            }
            cur = next;
        }
        return out;
    }

    /**
     * The numbers at {@code name} from {@code lo} to {@code hi}, each bound exact (a Long or a
     * Double, never NaN) and included or not as its flag says; null for no bound.
     */
    static RoaringBitmap between(
            KeyedHash hashes,
            String name,
            Number lo,
            boolean loIncluded,
            Number hi,
            boolean hiIncluded,
            Function<MetadataIndex.Key, RoaringBitmap> view) {
        RoaringBitmap out = new RoaringBitmap();
        // The longs: the bounds made whole, exactly.
        long a = Long.MIN_VALUE;
        long b = Long.MAX_VALUE;
        boolean empty = false;
        if (lo != null) {
            if (lo instanceof Long l) {
                if (!loIncluded && l == Long.MAX_VALUE) {
                    empty = true;
                }
                a = loIncluded ? l : l + 1;
            } else {
                double d = lo.doubleValue();
                if (d >= TWO_63_DOUBLE) {
                    empty = true;
                } else if (d >= -TWO_63_DOUBLE) {
                    // In long arithmetic: near 2^63 a double cannot hold floor(d) + 1.
                    if (loIncluded) {
                        double c = Math.ceil(d);
                        empty = c >= TWO_63_DOUBLE;
                        a = empty ? a : (long) c;
                    } else {
                        long f = (long) Math.floor(d);
                        empty = f == Long.MAX_VALUE;
                        a = f + 1;
                    }
                }
            }
        }
        if (hi != null) {
            if (hi instanceof Long l) {
                if (!hiIncluded && l == Long.MIN_VALUE) {
                    empty = true;
                }
                b = hiIncluded ? l : l - 1;
            } else {
                double d = hi.doubleValue();
                if (d < -TWO_63_DOUBLE) {
                    empty = true;
                } else if (d < TWO_63_DOUBLE) {
                    if (hiIncluded) {
                        b = (long) Math.floor(d);
                    } else {
                        long c = (long) Math.ceil(d);
                        empty |= c == Long.MIN_VALUE;
                        b = c - 1;
                    }
                }
            }
        }
        if (!empty && a <= b && view.apply(LONGS.anyKey(hashes, name)) != null) {
            out.or(LONGS.inOrder(hashes, name, sortableLong(a), sortableLong(b), view));
        }
        // The other doubles: fractions below 2^52 in magnitude, or magnitudes of 2^63 and more. A
        // long bound beyond 2^53 orders them as 2^62 (or -2^62) does, which no such double equals.
        if (view.apply(DOUBLES.anyKey(hashes, name)) == null) {
            return out;
        }
        long da = 0;
        long db = -1L; // unsigned: the whole space
        if (lo != null) {
            double d = asDoubleBound(lo);
            da = loIncluded ? sortableDouble(d) : sortableDouble(d) + 1;
            if (!loIncluded && sortableDouble(d) == -1L) {
                return out;
            }
        }
        if (hi != null) {
            double d = asDoubleBound(hi);
            if (!hiIncluded && sortableDouble(d) == 0) {
                return out;
            }
            db = hiIncluded ? sortableDouble(d) : sortableDouble(d) - 1;
        }
        if (Long.compareUnsigned(da, db) <= 0) {
            out.or(DOUBLES.inOrder(hashes, name, da, db, view));
        }
        return out;
    }

    private static double asDoubleBound(Number n) {
        if (n instanceof Long l && Math.abs((double) l) > 0x1p53) {
            return l > 0 ? 0x1p62 : -0x1p62;
        }
        return n.doubleValue();
    }
}
