package dev.nepenthe.core.internal.engine;

import java.util.concurrent.ConcurrentHashMap;

/**
 * What one open has hashed, shared by its hashing threads, so that a record repeats no hash an
 * earlier one made:
 *
 * <ul>
 *   <li>the keys of whole values (a name and a value: every key {@link MetadataIndex#keysOf} makes
 *       of them). Most metadata takes few values (a language, a year, a category, a source
 *       document's id over its chunks), so most records' keys come from here;
 *   <li>the keys of the coarser trie buckets (levels {@value MetadataIndex#MEMO_FROM} and up, 4,096
 *       values wide or more): a timestamp or a price shares its upper bits with its neighbours', so
 *       most of its sixteen buckets were hashed for an earlier record;
 *   <li>the keys of names alone.
 * </ul>
 *
 * It holds names and values in plaintext, as the records decoded beside it do, and only while the
 * open hashes: the open {@link #clear}s it when the hashing ends. Bounded: the values are dropped
 * all at once when {@value #MAX_VALUES} are held (the segments group a subject's records, so the
 * values that repeat tend to repeat close together), the buckets and names stop being added at
 * {@value #MAX}. Measured in docs/BENCHMARKS.md, "Metadata read from the sealed copy" and "An open
 * that hashes each metadata value once".
 */
final class OpenMemo {
    static final int MAX = 1 << 16;
    private static final int MAX_VALUES = 1 << 16;
    final ConcurrentHashMap<Bucket, MetadataIndex.Key> keys = new ConcurrentHashMap<>();

    /** The keys of names alone (a key's, and its tries' "any"): one hash per name per open. */
    final ConcurrentHashMap<Name, MetadataIndex.Key> names = new ConcurrentHashMap<>();

    /** The keys of a name and value. */
    final ConcurrentHashMap<Value, MetadataIndex.ValueKeys> values = new ConcurrentHashMap<>();

    record Name(String kind, String name) {}

    /**
     * A name and a stored value. Equal as the values are: {@code 3L} and {@code 3.0} are two
     * entries (each holds the same keys), never one entry for two different values.
     */
    record Value(String name, Object value) {}

    /**
     * Whether a value is one of the immutable kinds the store keeps (not, say, a filter's list).
     */
    static boolean remembers(Object value) {
        return value instanceof String
                || value instanceof Long
                || value instanceof Double
                || value instanceof Boolean;
    }

    void remember(Value v, MetadataIndex.ValueKeys keysOfValue) {
        if (values.size() >= MAX_VALUES) {
            values.clear();
        }
        values.putIfAbsent(v, keysOfValue);
    }

    record Bucket(NumberTrie trie, String name, int level, long prefix) {}

    /** Drops what it holds. */
    void clear() {
        keys.clear();
        names.clear();
        values.clear();
    }
}
