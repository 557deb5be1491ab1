package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.roaringbitmap.RoaringBitmap;

/**
 * A collection's live records as its storage tracks them: by ordinal, by shard bucket, and which
 * buckets changed since the last checkpoint. Ordinals are dense, so the records sit in an array: a
 * map's boxed keys and nodes would cost more per record than the record's own fields.
 */
final class LiveRecords {

    /**
     * A live record. {@code record} is held only while the storage opens, until the sink has it:
     * after that the plaintext lives in the collection's catalogue alone, and a checkpoint that
     * must seal a record again borrows it (see {@link SegmentRewriter}).
     */
    record Live(
            int ordinal,
            VectorRecord record,
            long seq,
            KeyedHash.Hash subject,
            KeyedHash.Hash recordHash) {
        Live withoutRecord() {
            return new Live(ordinal, null, seq, subject, recordHash);
        }
    }

    private Live[] slots = new Live[16];
    private int size;

    /** Each shard bucket's live ordinals. */
    private final List<RoaringBitmap> buckets;

    /** The buckets the next checkpoint rewrites. */
    private final BitSet dirty = new BitSet();

    LiveRecords(int bucketCount) {
        this.buckets = new ArrayList<>(bucketCount);
        for (int i = 0; i < bucketCount; i++) {
            buckets.add(new RoaringBitmap());
        }
    }

    Live get(int ordinal) {
        return ordinal >= 0 && ordinal < slots.length ? slots[ordinal] : null;
    }

    /**
     * Puts {@code l} at its ordinal and into its subject's bucket; the record it displaces
     * (returned, or null) leaves its own bucket.
     */
    Live put(Live l) {
        int ordinal = l.ordinal();
        if (ordinal >= slots.length) {
            slots = Arrays.copyOf(slots, Math.max(ordinal + 1, slots.length + (slots.length >> 1)));
        }
        Live old = slots[ordinal];
        slots[ordinal] = l;
        if (old == null) {
            size++;
        } else {
            bucketOf(old.subject()).remove(ordinal);
        }
        bucketOf(l.subject()).add(ordinal);
        return old;
    }

    /** Removes the record at {@code ordinal} from the table and its bucket; returns it, or null. */
    Live remove(int ordinal) {
        Live old = get(ordinal);
        if (old != null) {
            slots[ordinal] = null;
            size--;
            bucketOf(old.subject()).remove(ordinal);
        }
        return old;
    }

    /** Lets go of every record's plaintext (once the open's sink has it). */
    void dropPlaintext() {
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null) {
                slots[i] = slots[i].withoutRecord();
            }
        }
    }

    int size() {
        return size;
    }

    /** The live records in ordinal order (a copy: the table may change while it is walked). */
    List<Live> values() {
        List<Live> out = new ArrayList<>(size);
        for (Live l : slots) {
            if (l != null) {
                out.add(l);
            }
        }
        return out;
    }

    /** Each live record's keyed hash and ordinal, as the id map should hold them. */
    Map<KeyedHash.Hash, Integer> hashes() {
        Map<KeyedHash.Hash, Integer> live = new HashMap<>(size * 2);
        for (Live l : values()) {
            live.put(l.recordHash(), l.ordinal());
        }
        return live;
    }

    /** Makes the next checkpoint rewrite the bucket of {@code subject}. */
    void markDirty(KeyedHash.Hash subject) {
        dirty.set(bucketIndex(subject));
    }

    /** The buckets the next checkpoint rewrites (live: the caller may clear it). */
    BitSet dirty() {
        return dirty;
    }

    /** The live ordinals of bucket {@code b}. */
    RoaringBitmap members(int b) {
        return buckets.get(b);
    }

    RoaringBitmap bucketOf(KeyedHash.Hash subject) {
        return buckets.get(bucketIndex(subject));
    }

    int bucketIndex(KeyedHash.Hash subject) {
        byte[] b = subject.bytes();
        int h =
                ((b[0] & 0xFF) << 24)
                        | ((b[1] & 0xFF) << 16)
                        | ((b[2] & 0xFF) << 8)
                        | (b[3] & 0xFF);
        return Math.floorMod(h, buckets.size());
    }
}
