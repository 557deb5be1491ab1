package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * The records' metadata as keyed hashes, each with the ordinals that hold it, so that neither a
 * filter nor a forget's join-key check needs the plaintext the catalogue no longer keeps (a
 * record's metadata is read from its sealed copy). Four kinds of key:
 *
 * <ul>
 *   <li>a key and a value ({@code metadata-value}): numbers by their exact value, so {@code 3} and
 *       {@code 3.0} are one key, as {@link Filter#eq} has them equal (a number's is the finest
 *       bucket of its trie, below);
 *   <li>a key alone ({@code metadata-key}), for {@link Filter#exists};
 *   <li>a join key ({@code metadata-join}): a string value folded, and each of its tokens ({@link
 *       JoinKeys#keysOf});
 *   <li>a number's buckets in order ({@code metadata-order}, see {@link NumberTrie}), for ranges
 *       and numeric comparisons.
 * </ul>
 *
 * Each is the first 128 bits of an HMAC under the store's keyed-hash key: the heap holds no
 * metadata value or key name. A filter of equalities, {@code in}, {@code exists}, numeric ranges
 * and comparisons, {@code not}, {@code and} and {@code or} is answered from the bitmaps alone; a
 * comparison of strings or a {@code contains} has no order or substring to go by, so it decrypts
 * the metadata of each record still in question (after the other parts of an {@code and}, and only
 * records that have the key).
 *
 * <p>Reads are lock-free: they see {@link #published} bitmaps, never changed once there. The writer
 * (under the collection's writer mutex) changes private copies of what it touches and {@link
 * #publish}es them whole, as the catalogue publishes its tenant bitmaps, so a bitmap is held once
 * between writes.
 */
final class MetadataIndex {

    /** A key as the index holds it: 128 bits of its keyed hash. */
    record Key(long hi, long lo) {}

    private final KeyedHash hashes;

    /** What reads see; each bitmap here is never changed again. */
    private final ConcurrentHashMap<Key, RoaringBitmap> published = new ConcurrentHashMap<>();

    /** The writer's copies of the bitmaps it changed since the last {@link #publish}. */
    private final Map<Key, RoaringBitmap> pending = new HashMap<>();

    /**
     * The writer's links from each number's bucket to the next coarser bucket of its trie (the
     * finest level's to the level above, the coarsest's to the trie's "any" key), so that an entry
     * keeps one key per number rather than {@value #CHAIN}. Only the writer reads it.
     */
    private final Map<Key, Key> parents = new HashMap<>();

    MetadataIndex(KeyedHash hashes) {
        this.hashes = hashes;
    }

    /** The keys of one record's metadata. */
    static final class Keys {
        static final Keys NONE = new Keys(new long[0], new ValueKeys[0]);

        /**
         * What the record's entry keeps, two longs each, without repeats: the keys of its names,
         * its values and join keys, and of each number the finest bucket of its trie, from which
         * {@link #parents} lead to the coarser ones. Empty for no metadata. Unlinking the entry
         * needs nothing else, so no plaintext.
         */
        private final long[] kept;

        /**
         * The keys of each of its names and values, which {@link #add} links (a number's chain
         * too); not kept. An open's records share them where their values repeat.
         */
        private final ValueKeys[] values;

        Keys(long[] kept, ValueKeys[] values) {
            this.kept = kept;
            this.values = values;
        }

        long[] kept() {
            return kept;
        }

        ValueKeys[] values() {
            return values;
        }
    }

    /** The keys a number's chain holds: one bucket per trie level and its trie's "any" key. */
    static final int CHAIN = 17;

    /** {@link #keysOf(Map, OpenMemo)} without a memo. */
    Keys keysOf(Map<String, Object> metadata) {
        return keysOf(metadata, null);
    }

    /**
     * The keys of a record's metadata, reusing the keys an open has already hashed ({@code memo},
     * null for none): records repeat their names and many of their values, and their numbers share
     * most of their upper bits.
     */
    Keys keysOf(Map<String, Object> metadata, OpenMemo memo) {
        if (metadata.isEmpty()) {
            return Keys.NONE;
        }
        Set<Key> kept = new LinkedHashSet<>();
        ValueKeys[] values = new ValueKeys[metadata.size()];
        int i = 0;
        for (Map.Entry<String, Object> m : metadata.entrySet()) {
            ValueKeys v = keysOfValue(m.getKey(), m.getValue(), memo);
            kept.addAll(Arrays.asList(v.kept()));
            values[i++] = v;
        }
        return new Keys(longs(kept), values);
    }

    private static long[] longs(Collection<Key> keys) {
        long[] out = new long[2 * keys.size()];
        int i = 0;
        for (Key k : keys) {
            out[i++] = k.hi();
            out[i++] = k.lo();
        }
        return out;
    }

    /**
     * The keys of one name and value: those an entry keeps (the name's, the value's, its join keys,
     * a number's finest bucket), and a number's chain from that bucket to its trie's "any" key
     * ({@value #CHAIN} keys; empty for anything else).
     */
    static final class ValueKeys {
        private final Key[] kept;
        private final Key[] chain;

        /**
         * Whether the open's memo handed these keys to more than one record (then its linking
         * groups them).
         */
        private volatile boolean repeated;

        ValueKeys(Key[] kept, Key[] chain) {
            this.kept = kept;
            this.chain = chain;
        }

        Key[] kept() {
            return kept;
        }

        Key[] chain() {
            return chain;
        }
    }

    private static final Key[] NO_CHAIN = new Key[0];

    /**
     * The keys of one name and value, in the order {@link #keysOf} adds them; from the memo when it
     * has them.
     */
    private ValueKeys keysOfValue(String name, Object value, OpenMemo memo) {
        OpenMemo.Value v =
                memo != null && OpenMemo.remembers(value) ? new OpenMemo.Value(name, value) : null;
        ValueKeys known = v == null ? null : memo.values.get(v);
        if (known != null) {
            if (!known.repeated) {
                known.repeated = true;
            }
            return known;
        }
        List<Key> keys = new ArrayList<>(4);
        long[] one = new long[2];
        keys.add(nameKey("metadata-key", name, memo));
        Key[] chain = value instanceof Number num ? orderChain(name, num, one, memo) : NO_CHAIN;
        if (chain.length > 0) {
            keys.add(chain[0]); // a number's finest bucket is its value's key
        } else if (valueKey(name, value, one)) {
            keys.add(new Key(one[0], one[1]));
        }
        if (value instanceof String s) {
            for (String token : JoinKeys.keysOf(s)) {
                keys.add(joinKey(token));
            }
        }
        ValueKeys out = new ValueKeys(keys.toArray(new Key[0]), chain);
        if (v != null) {
            memo.remember(v, out);
        }
        return out;
    }

    /** The first trie level whose bucket keys an open shares (see {@link OpenMemo}). */
    static final int MEMO_FROM = 3;

    /**
     * A number's chain: its bucket at each trie level, finest first, then its trie's "any" key;
     * empty for NaN.
     */
    private Key[] orderChain(String name, Number n, long[] one, OpenMemo memo) {
        NumberTrie.Place at = NumberTrie.Place.of(n);
        if (at == null) {
            return NO_CHAIN;
        }
        NumberTrie trie = at.trie();
        long sortable = at.bits();
        Key[] chain = new Key[CHAIN];
        for (int j = 0; j < NumberTrie.LEVELS; j++) {
            long prefix = sortable >>> (NumberTrie.STEP * j);
            OpenMemo.Bucket bucket =
                    memo != null && j >= MEMO_FROM
                            ? new OpenMemo.Bucket(trie, name, j, prefix)
                            : null;
            Key known = bucket == null ? null : memo.keys.get(bucket);
            if (known != null) {
                chain[j] = known;
                continue;
            }
            hashes.prefix(trie.level(j), name, prefix, one, 0);
            Key k = new Key(one[0], one[1]);
            chain[j] = k;
            if (bucket != null && memo.keys.size() < OpenMemo.MAX) {
                memo.keys.putIfAbsent(bucket, k);
            }
        }
        chain[NumberTrie.LEVELS] = nameKey(trie.any(), name, memo);
        return chain;
    }

    /** The key of a name alone under {@code kind}, from the open's memo when it has it. */
    private Key nameKey(String kind, String name, OpenMemo memo) {
        OpenMemo.Name n = memo == null ? null : new OpenMemo.Name(kind, name);
        Key known = n == null ? null : memo.names.get(n);
        if (known != null) {
            return known;
        }
        long[] one = new long[2];
        hashes.prefix(kind, name, one, 0);
        Key k = new Key(one[0], one[1]);
        if (n != null && memo.names.size() < OpenMemo.MAX) {
            memo.names.putIfAbsent(n, k);
        }
        return k;
    }

    /** The key of a folded join key (see {@link JoinKeys#fold}). */
    Key joinKey(String folded) {
        long[] one = new long[2];
        hashes.prefix("metadata-join", folded, one, 0);
        return new Key(one[0], one[1]);
    }

    /**
     * Writes into {@code out} the key of (name, value) and returns true; false when the value can
     * equal no stored value (NaN) or is of a type whose equality only its own test knows. Stored
     * values are strings, longs, finite doubles and booleans; a filter's may be any number, widened
     * here as {@link Filter} compares them: exactly, so a double that is a whole number within the
     * range of a long is that long, and -0.0 is 0. A number's key is the finest bucket of its trie
     * (the bucket of that one value), so a record keeps one key for both.
     */
    private boolean valueKey(String name, Object value, long[] out) {
        switch (value) {
            case String s -> hashes.prefix("metadata-value-string", name, s, out, 0);
            case Boolean b -> hashes.prefix("metadata-value-boolean", name, b ? 1 : 0, out, 0);
            case Number n -> {
                NumberTrie.Place at = NumberTrie.Place.of(n);
                if (at == null) {
                    return false;
                }
                hashes.prefix(at.trie().level(0), name, at.bits(), out, 0);
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    // ---- the writer (under the collection's writer mutex)
    // ----------------------------------------

    /**
     * Adds an ordinal under each of its keys, and links each bucket of its numbers' chains to the
     * next coarser one. Between {@link #startBulk} and {@link #endBulk}, only notes it.
     */
    void add(int ord, Keys keys) {
        for (ValueKeys v : keys.values()) {
            if (bulk != null && v.repeated) {
                bulk.computeIfAbsent(v, x -> new Ordinals()).add(ord);
            } else {
                addUnder(v, b -> b.add(ord));
            }
        }
    }

    /**
     * Adds ordinals ({@code put} into a bitmap) under the keys of one name and value, and links its
     * chain.
     */
    private void addUnder(ValueKeys v, Consumer<RoaringBitmap> put) {
        for (Key k : v.kept()) {
            put.accept(writable(k));
        }
        Key[] chain = v.chain();
        for (int j = 1; j < chain.length; j++) {
            put.accept(writable(chain[j]));
        }
        // A bucket already linked is held, so its parent is held and linked too: the links
        // above it are there.
        int j = 1;
        while (j < chain.length && parents.putIfAbsent(chain[j - 1], chain[j]) == null) {
            j++;
        }
    }

    /** The ordinals an open's records share one {@link ValueKeys} with, in the order they came. */
    private static final class Ordinals {
        private int[] ords = new int[4];
        private int size;

        void add(int ord) {
            if (size == ords.length) {
                ords = Arrays.copyOf(ords, size * 2);
            }
            ords[size++] = ord;
        }
    }

    /**
     * Records linked until {@link #endBulk}, by the keys they share: an open's records repeat their
     * values (the memo hands them the same {@link ValueKeys}), so each value's keys are looked up
     * once for all its records rather than once a record. A value only one record holds is added at
     * once. Null outside an open.
     */
    private IdentityHashMap<ValueKeys, Ordinals> bulk;

    /**
     * Up to this many ordinals a value's are added one by one: an {@code or} walks every container
     * of the bitmap it goes into, and a coarse bucket's hold most of the collection (an open of
     * records with a unique timestamp each spent much of its time in such {@code or}s of one
     * ordinal: docs/BENCHMARKS.md, "An open that hashes each metadata value once").
     */
    private static final int FEW = 64;

    /** From here to {@link #endBulk}, {@link #add} only notes what it adds (an open's linking). */
    void startBulk() {
        bulk = new IdentityHashMap<>();
    }

    /** Adds what was noted since {@link #startBulk}. */
    void endBulk() {
        IdentityHashMap<ValueKeys, Ordinals> noted = bulk;
        bulk = null;
        if (noted != null) {
            noted.forEach(
                    (v, o) -> {
                        if (o.size <= FEW) {
                            addUnder(v, b -> b.addN(o.ords, 0, o.size));
                        } else {
                            RoaringBitmap ords = new RoaringBitmap();
                            ords.addN(o.ords, 0, o.size);
                            addUnder(v, b -> b.or(ords));
                        }
                    });
        }
    }

    /**
     * Takes an ordinal out from under each key an entry kept and, from a number's finest bucket,
     * every coarser bucket its {@link #parents} lead to. A bucket left empty loses its link: its
     * keyed hash stays nowhere.
     */
    void remove(int ord, long[] kept) {
        endBulk(); // what was noted goes in first, so that this takes it out
        for (int i = 0; i < kept.length; i += 2) {
            Key k = new Key(kept[i], kept[i + 1]);
            while (k != null) {
                RoaringBitmap b = writable(k);
                b.remove(ord);
                Key next = parents.get(k);
                if (b.isEmpty()) {
                    parents.remove(k);
                }
                k = next;
            }
        }
    }

    private RoaringBitmap writable(Key k) {
        return pending.computeIfAbsent(
                k,
                x -> {
                    RoaringBitmap p = published.get(x);
                    return p == null ? new RoaringBitmap() : p.clone();
                });
    }

    /** The writer's bitmap of a key (do not keep or change it), or null. */
    RoaringBitmap writerView(Key k) {
        endBulk();
        RoaringBitmap p = pending.get(k);
        if (p != null) {
            return p.isEmpty() ? null : p;
        }
        return published.get(k);
    }

    /** Makes what the writer changed visible to reads. */
    void publish() {
        endBulk();
        pending.forEach(
                (k, b) -> {
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
     * Adds to {@code expected} what the index should hold for one entry's kept keys: the ordinal
     * under each, and under every coarser bucket its {@link #parents} lead to.
     */
    void expect(Map<Key, RoaringBitmap> expected, int ord, long[] kept) {
        for (int i = 0; i < kept.length; i += 2) {
            for (Key k = new Key(kept[i], kept[i + 1]); k != null; k = parents.get(k)) {
                expected.computeIfAbsent(k, x -> new RoaringBitmap()).add(ord);
            }
        }
    }

    /**
     * Whether the index holds exactly the given keys' ordinals (none pending: no write may be in
     * flight) and links no bucket it no longer holds; the integrity check compares it with the
     * entries' keys ({@link #expect}).
     */
    boolean holdsExactly(Map<Key, RoaringBitmap> expected) {
        if (!pending.isEmpty() || !published.equals(expected)) {
            return false;
        }
        for (Map.Entry<Key, Key> link : parents.entrySet()) {
            if (!published.containsKey(link.getKey()) || !published.containsKey(link.getValue())) {
                return false;
            }
        }
        return true;
    }

    /** How many keys the index holds. */
    int size() {
        return published.size();
    }

    // ---- filters
    // ---------------------------------------------------------------------------------

    /**
     * The ordinals of {@code candidates} whose metadata passes {@code filter}, exactly as {@link
     * Filter#test} would say of each record's metadata.
     *
     * @param view the bitmaps to use: {@link #publishedView} for a read, {@link #writerView} under
     *     the writer mutex
     * @param metadataOf a record's metadata by ordinal, decrypted (an empty map for a record
     *     without), or null when the ordinal holds no record any more; asked only for the parts of
     *     a filter the bitmaps cannot answer
     */
    RoaringBitmap matching(
            Filter filter,
            RoaringBitmap candidates,
            Function<Key, RoaringBitmap> view,
            IntFunction<Map<String, Object>> metadataOf) {
        if (candidates.isEmpty()) {
            return new RoaringBitmap();
        }
        return switch (filter) {
            case Filter.Eq eq -> {
                long[] k = new long[2];
                yield valueKey(eq.key(), eq.value(), k)
                        ? and(candidates, view.apply(new Key(k[0], k[1])))
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
            case Filter.Not not ->
                    RoaringBitmap.andNot(
                            candidates, matching(not.inner(), candidates, view, metadataOf));
            case Filter.And and -> {
                RoaringBitmap left = null; // null until a part narrows the candidates
                // The parts the bitmaps answer first: what remains for the others to decrypt is
                // smaller.
                for (Filter f : and.all()) {
                    if (answeredByBitmaps(f)) {
                        left = matching(f, left == null ? candidates : left, view, metadataOf);
                    }
                }
                for (Filter f : and.all()) {
                    if (!answeredByBitmaps(f)) {
                        left = matching(f, left == null ? candidates : left, view, metadataOf);
                    }
                }
                yield left == null ? candidates.clone() : left;
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
            case Filter.Range r ->
                    and(
                            candidates,
                            NumberTrie.between(
                                    hashes, r.key(), r.min(), true, r.max(), true, view));
            case Filter.Compare c when c.value() instanceof Long || c.value() instanceof Double -> {
                Number b = (Number) c.value();
                yield and(
                        candidates,
                        switch (c.comparison()) {
                            case GT ->
                                    NumberTrie.between(
                                            hashes, c.key(), b, false, null, false, view);
                            case GTE ->
                                    NumberTrie.between(hashes, c.key(), b, true, null, false, view);
                            case LT ->
                                    NumberTrie.between(
                                            hashes, c.key(), null, false, b, false, view);
                            case LTE ->
                                    NumberTrie.between(hashes, c.key(), null, false, b, true, view);
                        });
            }
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
            case Filter.Range r -> true;
            case Filter.Compare c -> c.value() instanceof Long || c.value() instanceof Double;
            case Filter.Contains c -> false;
        };
    }

    private static boolean indexable(Object v) {
        return v instanceof String
                || v instanceof Boolean
                || v instanceof Long
                || v instanceof Integer
                || v instanceof Short
                || v instanceof Byte
                || v instanceof Double
                || v instanceof Float;
    }

    private Key nameKey(String name) {
        return nameKey("metadata-key", name, null);
    }

    /**
     * A part no bitmap answers: tests the filter on the decrypted metadata of each candidate that
     * has the key (every such part fails on a record without its key).
     */
    private RoaringBitmap tested(
            Filter filter,
            String name,
            RoaringBitmap candidates,
            Function<Key, RoaringBitmap> view,
            IntFunction<Map<String, Object>> metadataOf) {
        RoaringBitmap out = new RoaringBitmap();
        RoaringBitmap having = view.apply(nameKey(name));
        if (having == null) {
            return out;
        }
        for (IntIterator it = RoaringBitmap.and(candidates, having).getIntIterator();
                it.hasNext(); ) {
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
