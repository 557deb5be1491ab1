package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * The records' metadata as keyed hashes, each with the ordinals that hold it, so that neither a
 * filter nor a forget's join-key check needs the plaintext the catalogue no longer keeps (a
 * record's metadata is read from its sealed copy). Three kinds of key:
 * <ul>
 *   <li>a key and a value ({@code metadata-value}): numbers by their exact value, so {@code 3}
 *       and {@code 3.0} are one key, as {@link Filter#eq} has them equal;</li>
 *   <li>a key alone ({@code metadata-key}), for {@link Filter#exists};</li>
 *   <li>a join key ({@code metadata-join}): a string value folded, and each of its tokens
 *       ({@link JoinKeys#keysOf}).</li>
 * </ul>
 * Each is the first 128 bits of an HMAC under the store's keyed-hash key: the heap holds no
 * metadata value or key name. A filter of equalities, {@code in}, {@code exists}, {@code not},
 * {@code and} and {@code or} is answered from the bitmaps alone; a range, a comparison or a
 * {@code contains} has no order or substring to go by, so it decrypts the metadata of each
 * record still in question (after the other parts of an {@code and}, and only records that
 * have the key).
 *
 * <p>Reads are lock-free: they see {@link #published} bitmaps, never changed once there. The
 * writer (under the collection's writer mutex) changes private copies of what it touches and
 * {@link #publish}es them whole, as the catalogue publishes its tenant bitmaps, so a bitmap is
 * held once between writes.
 */
final class MetadataIndex {

    /** A key as the index holds it: 128 bits of its keyed hash. */
    record Key(long hi, long lo) {}

    private static final long[] NONE = new long[0];
    /** 2^63: doubles from -2^63 up to here that are whole numbers are exactly longs. */
    private static final double TWO_63_DOUBLE = 0x1p63;

    private final KeyedHash hashes;
    /** What reads see; each bitmap here is never changed again. */
    private final ConcurrentHashMap<Key, RoaringBitmap> published = new ConcurrentHashMap<>();
    /** The writer's copies of the bitmaps it changed since the last {@link #publish}. */
    private final Map<Key, RoaringBitmap> pending = new HashMap<>();

    MetadataIndex(KeyedHash hashes) {
        this.hashes = hashes;
    }

    /**
     * The keys of a record's metadata, two longs each, without repeats; an empty array for
     * none. This is what an entry keeps, so that unlinking it needs no plaintext.
     */
    long[] keysOf(Map<String, Object> metadata) {
        if (metadata.isEmpty()) {
            return NONE;
        }
        Set<Key> keys = new LinkedHashSet<>();
        long[] one = new long[2];
        for (Map.Entry<String, Object> m : metadata.entrySet()) {
            String name = m.getKey();
            hashes.prefix("metadata-key", name, one, 0);
            keys.add(new Key(one[0], one[1]));
            if (valueKey(name, m.getValue(), one)) {
                keys.add(new Key(one[0], one[1]));
            }
            if (m.getValue() instanceof String s) {
                for (String token : JoinKeys.keysOf(s)) {
                    keys.add(joinKey(token));
                }
            }
        }
        long[] out = new long[2 * keys.size()];
        int i = 0;
        for (Key k : keys) {
            out[i++] = k.hi();
            out[i++] = k.lo();
        }
        return out;
    }

    /** The key of a folded join key (see {@link JoinKeys#fold}). */
    Key joinKey(String folded) {
        long[] one = new long[2];
        hashes.prefix("metadata-join", folded, one, 0);
        return new Key(one[0], one[1]);
    }

    /**
     * Writes into {@code out} the key of (name, value) and returns true; false when the value can
     * equal no stored value (NaN) or is of a type whose equality only its own test knows.
     * Stored values are strings, longs, finite doubles and booleans; a filter's may be any
     * number, widened here as {@link Filter} compares them: exactly, so a double that is a whole
     * number within the range of a long is that long, and -0.0 is 0.
     */
    private boolean valueKey(String name, Object value, long[] out) {
        switch (value) {
            case String s -> hashes.prefix("metadata-value-string", name, s, out, 0);
            case Boolean b -> hashes.prefix("metadata-value-boolean", name, b ? 1 : 0, out, 0);
            case Long l -> hashes.prefix("metadata-value-long", name, l, out, 0);
            case Integer i -> hashes.prefix("metadata-value-long", name, i, out, 0);
            case Short s -> hashes.prefix("metadata-value-long", name, s, out, 0);
            case Byte b -> hashes.prefix("metadata-value-long", name, b, out, 0);
            case Double d -> {
                return doubleKey(name, d, out);
            }
            case Float f -> {
                return doubleKey(name, f.doubleValue(), out);
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    private boolean doubleKey(String name, double d, long[] out) {
        if (Double.isNaN(d)) {
            return false;
        }
        if (d == Math.rint(d) && d >= -TWO_63_DOUBLE && d < TWO_63_DOUBLE) {
            hashes.prefix("metadata-value-long", name, (long) d, out, 0); // -0.0 becomes 0
        } else {
            hashes.prefix("metadata-value-double", name, Double.doubleToLongBits(d), out, 0);
        }
        return true;
    }

    // ---- the writer (under the collection's writer mutex) ----------------------------------------

    /** Adds an ordinal under each of its keys. */
    void add(int ord, long[] keys) {
        for (int i = 0; i < keys.length; i += 2) {
            writable(new Key(keys[i], keys[i + 1])).add(ord);
        }
    }

    /** Takes an ordinal out from under each of its keys. */
    void remove(int ord, long[] keys) {
        for (int i = 0; i < keys.length; i += 2) {
            writable(new Key(keys[i], keys[i + 1])).remove(ord);
        }
    }

    private RoaringBitmap writable(Key k) {
        return pending.computeIfAbsent(k, x -> {
            RoaringBitmap p = published.get(x);
            return p == null ? new RoaringBitmap() : p.clone();
        });
    }

    /** The writer's bitmap of a key (do not keep or change it), or null. */
    RoaringBitmap writerView(Key k) {
        RoaringBitmap p = pending.get(k);
        if (p != null) {
            return p.isEmpty() ? null : p;
        }
        return published.get(k);
    }

    /** Makes what the writer changed visible to reads. */
    void publish() {
        pending.forEach((k, b) -> {
            if (b.isEmpty()) {
                published.remove(k);
            } else {
                b.runOptimize();
                published.put(k, b);
            }
        });
        pending.clear();
    }

    /** What reads see of a key (immutable), or null. */
    RoaringBitmap publishedView(Key k) {
        return published.get(k);
    }

    /**
     * Whether the index holds exactly the given keys' ordinals (none pending: no write may be in
     * flight); the integrity check compares it with the entries' keys.
     */
    boolean holdsExactly(Map<Key, RoaringBitmap> expected) {
        return pending.isEmpty() && published.equals(expected);
    }

    /** How many keys the index holds. */
    int size() {
        return published.size();
    }

    // ---- filters ---------------------------------------------------------------------------------

    /**
     * The ordinals of {@code candidates} whose metadata passes {@code filter}, exactly as
     * {@link Filter#test} would say of each record's metadata.
     *
     * @param view the bitmaps to use: {@link #publishedView} for a read, {@link #writerView}
     *     under the writer mutex
     * @param metadataOf a record's metadata by ordinal, decrypted (an empty map for a record
     *     without), or null when the ordinal holds no record any more; asked only for the parts
     *     of a filter the bitmaps cannot answer
     */
    RoaringBitmap matching(Filter filter, RoaringBitmap candidates, Function<Key, RoaringBitmap> view,
            IntFunction<Map<String, Object>> metadataOf) {
        if (candidates.isEmpty()) {
            return new RoaringBitmap();
        }
        return switch (filter) {
            case Filter.Eq eq -> {
                long[] k = new long[2];
                yield valueKey(eq.key(), eq.value(), k) ? and(candidates, view.apply(new Key(k[0], k[1])))
                        : tested(filter, eq.key(), candidates, view, metadataOf);
            }
            case Filter.In in -> {
                RoaringBitmap out = new RoaringBitmap();
                long[] k = new long[2];
                for (Object v : in.values()) {
                    if (!valueKey(in.key(), v, k)) {
                        yield tested(filter, in.key(), candidates, view, metadataOf);
                    }
                    RoaringBitmap b = view.apply(new Key(k[0], k[1]));
                    if (b != null) {
                        out.or(b);
                    }
                }
                out.and(candidates);
                yield out;
            }
            case Filter.Exists ex -> and(candidates, view.apply(nameKey(ex.key())));
            case Filter.Not not -> RoaringBitmap.andNot(candidates, matching(not.inner(), candidates, view, metadataOf));
            case Filter.And and -> {
                RoaringBitmap left = candidates;
                // The parts the bitmaps answer first: what remains for the others to decrypt is smaller.
                for (Filter f : and.all()) {
                    if (answeredByBitmaps(f)) {
                        left = matching(f, left, view, metadataOf);
                    }
                }
                for (Filter f : and.all()) {
                    if (!answeredByBitmaps(f)) {
                        left = matching(f, left, view, metadataOf);
                    }
                }
                yield left == candidates ? candidates.clone() : left;
            }
            case Filter.Or or -> {
                RoaringBitmap out = new RoaringBitmap();
                RoaringBitmap left = candidates;
                for (Filter f : or.any()) {
                    RoaringBitmap m = matching(f, left, view, metadataOf);
                    out.or(m);
                    left = RoaringBitmap.andNot(left, m);
                }
                yield out;
            }
            case Filter.Range r -> tested(filter, r.key(), candidates, view, metadataOf);
            case Filter.Compare c -> tested(filter, c.key(), candidates, view, metadataOf);
            case Filter.Contains c -> tested(filter, c.key(), candidates, view, metadataOf);
        };
    }

    /** Whether {@link #matching} answers a filter without decrypting anything. */
    static boolean answeredByBitmaps(Filter f) {
        return switch (f) {
            case Filter.Eq eq -> indexable(eq.value());
            case Filter.In in -> in.values().stream().allMatch(MetadataIndex::indexable);
            case Filter.Exists ex -> true;
            case Filter.Not not -> answeredByBitmaps(not.inner());
            case Filter.And and -> and.all().stream().allMatch(MetadataIndex::answeredByBitmaps);
            case Filter.Or or -> or.any().stream().allMatch(MetadataIndex::answeredByBitmaps);
            case Filter.Range r -> false;
            case Filter.Compare c -> false;
            case Filter.Contains c -> false;
        };
    }

    private static boolean indexable(Object v) {
        return v instanceof String || v instanceof Boolean || v instanceof Long || v instanceof Integer
                || v instanceof Short || v instanceof Byte || v instanceof Double || v instanceof Float;
    }

    private Key nameKey(String name) {
        long[] k = new long[2];
        hashes.prefix("metadata-key", name, k, 0);
        return new Key(k[0], k[1]);
    }

    /**
     * A part no bitmap answers: tests the filter on the decrypted metadata of each candidate that
     * has the key (every such part fails on a record without its key).
     */
    private RoaringBitmap tested(Filter filter, String name, RoaringBitmap candidates, Function<Key, RoaringBitmap> view,
            IntFunction<Map<String, Object>> metadataOf) {
        RoaringBitmap out = new RoaringBitmap();
        RoaringBitmap having = view.apply(nameKey(name));
        if (having == null) {
            return out;
        }
        for (IntIterator it = RoaringBitmap.and(candidates, having).getIntIterator(); it.hasNext(); ) {
            int ord = it.next();
            Map<String, Object> m = metadataOf.apply(ord);
            if (m != null && filter.test(m)) {
                out.add(ord);
            }
        }
        return out;
    }

    private static RoaringBitmap and(RoaringBitmap candidates, RoaringBitmap b) {
        return b == null ? new RoaringBitmap() : RoaringBitmap.and(candidates, b);
    }
}
