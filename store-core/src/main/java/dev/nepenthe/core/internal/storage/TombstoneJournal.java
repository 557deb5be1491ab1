package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.Durability;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.io.TestPoints;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The durable record of what was deleted, kept in the keystore folder, apart from the data: a
 * snapshot of the data folder restored later cannot undo a deletion made after it, because every
 * open replays this journal and drops what it names before serving anything.
 *
 * <p>Entries hold keyed hashes and sequence numbers only, never ids or content: "record R of
 * collection C was deleted at version S", "every record of subject-scope K in C up to S",
 * "collection C was dropped", and the floors re-admissions take: "versions in C continue above S",
 * and "subject-scope K in C was re-admitted at S" (the same floor, and a key K has after S is a new
 * one, which a replay of K's earlier drop must not destroy).
 */
public final class TombstoneJournal implements Closeable {

    private static final byte RECORD = 1,
            SUBJECT = 2,
            COLLECTION = 3,
            FLOOR = 4,
            SUBJECT_READMITTED = 5;

    /** Generations kept before the journal is compacted into one at open. */
    private static final int MAX_GENERATIONS = 8;

    private final WriteAheadLog log;
    private final Map<KeyedHash.Hash, Map<KeyedHash.Hash, Long>> records = new HashMap<>();
    private final Map<KeyedHash.Hash, Map<KeyedHash.Hash, Long>> subjects = new HashMap<>();
    private final Map<KeyedHash.Hash, Map<KeyedHash.Hash, Long>> readmittedSubjects =
            new HashMap<>();
    private final Map<KeyedHash.Hash, Long> maxSeq = new HashMap<>();
    private final Set<KeyedHash.Hash> droppedCollections = new HashSet<>();

    private TombstoneJournal(WriteAheadLog log) {
        this.log = log;
    }

    public static TombstoneJournal open(Path folder) throws IOException {
        return open(folder, CrashPoints.bound());
    }

    /** Opens the journal in {@code folder}, its log reporting crash points to {@code points}. */
    public static TombstoneJournal open(Path folder, TestPoints points) throws IOException {
        List<byte[]> entries = new ArrayList<>();
        WriteAheadLog wal =
                WriteAheadLog.open(folder, Durability.SYNC, (g, p) -> entries.add(p), null, points);
        TombstoneJournal j = new TombstoneJournal(wal);
        for (byte[] e : entries) {
            j.apply(e);
        }
        if (wal.generations().size() > MAX_GENERATIONS) {
            long gen = wal.rotate();
            wal.sync(wal.append(entries));
            wal.deleteBefore(gen);
        }
        return j;
    }

    private void apply(byte[] e) {
        ByteBuffer b = ByteBuffer.wrap(e);
        byte type = b.get();
        KeyedHash.Hash collection = hash(b);
        if (type == COLLECTION) {
            droppedCollections.add(collection);
            return;
        }
        if (type == FLOOR) {
            maxSeq.merge(collection, b.getLong(), Math::max);
            return;
        }
        KeyedHash.Hash key = hash(b);
        long seq = b.getLong();
        Map<KeyedHash.Hash, Map<KeyedHash.Hash, Long>> target =
                type == RECORD
                        ? records
                        : type == SUBJECT_READMITTED ? readmittedSubjects : subjects;
        target.computeIfAbsent(collection, c -> new HashMap<>()).merge(key, seq, Math::max);
        maxSeq.merge(collection, seq, Math::max);
    }

    private static KeyedHash.Hash hash(ByteBuffer b) {
        byte[] h = new byte[KeyedHash.LENGTH];
        b.get(h);
        return new KeyedHash.Hash(h);
    }

    private static byte[] entry(
            byte type, KeyedHash.Hash collection, KeyedHash.Hash key, long seq) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(type);
            out.write(collection.bytes());
            if (key != null) {
                out.write(key.bytes());
                out.writeLong(seq);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * Durably records that these records (keyed hash of tenant and id) were deleted at {@code seq}.
     */
    public synchronized void recordsDeleted(
            KeyedHash.Hash collection, List<KeyedHash.Hash> recordHashes, long seq)
            throws IOException {
        List<byte[]> es = new ArrayList<>();
        for (KeyedHash.Hash r : recordHashes) {
            byte[] e = entry(RECORD, collection, r, seq);
            es.add(e);
            apply(e);
        }
        log.sync(log.append(es));
    }

    /**
     * Durably records that every record of a subject scope written before {@code seq} is deleted.
     */
    public synchronized void subjectDropped(
            KeyedHash.Hash collection, KeyedHash.Hash subject, long seq) throws IOException {
        byte[] e = entry(SUBJECT, collection, subject, seq);
        apply(e);
        log.sync(log.append(e));
    }

    /**
     * Durably records that the collection's versions continue above {@code seq}: every open starts
     * numbering above the journal's highest entry, so a write after this gets a higher version even
     * when older files (a restored snapshot) come back. Deletes nothing.
     */
    public synchronized void versionFloor(KeyedHash.Hash collection, long seq) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FLOOR);
            out.write(collection.bytes());
            out.writeLong(seq);
        }
        byte[] e = bytes.toByteArray();
        apply(e);
        log.sync(log.append(e));
    }

    /**
     * Durably records a subject scope's re-admission at {@code seq}: a floor as {@link
     * #versionFloor} takes, and the mark that a key the scope has from then on is a new one.
     * Deletes nothing.
     */
    public synchronized void subjectReadmitted(
            KeyedHash.Hash collection, KeyedHash.Hash subject, long seq) throws IOException {
        byte[] e = entry(SUBJECT_READMITTED, collection, subject, seq);
        apply(e);
        log.sync(log.append(e));
    }

    /**
     * Subject scopes re-admitted in a collection, with the floor of the latest re-admission of
     * each.
     */
    public synchronized Map<KeyedHash.Hash, Long> subjectReadmissions(KeyedHash.Hash collection) {
        return Map.copyOf(readmittedSubjects.getOrDefault(collection, Map.of()));
    }

    public synchronized void collectionDropped(KeyedHash.Hash collection) throws IOException {
        byte[] e = entry(COLLECTION, collection, null, 0);
        apply(e);
        log.sync(log.append(e));
    }

    /** True if the version {@code seq} of a record is deleted, by itself or with its subject. */
    public synchronized boolean isDeleted(
            KeyedHash.Hash collection, KeyedHash.Hash record, KeyedHash.Hash subject, long seq) {
        if (droppedCollections.contains(collection)) {
            return true;
        }
        Long r = records.getOrDefault(collection, Map.of()).get(record);
        Long s = subjects.getOrDefault(collection, Map.of()).get(subject);
        return (r != null && seq < r) || (s != null && seq < s);
    }

    /** Subject scopes dropped in a collection, with the sequence number of each drop. */
    public synchronized Map<KeyedHash.Hash, Long> subjectDrops(KeyedHash.Hash collection) {
        return Map.copyOf(subjects.getOrDefault(collection, Map.of()));
    }

    public synchronized boolean isDropped(KeyedHash.Hash collection) {
        return droppedCollections.contains(collection);
    }

    /** Highest sequence number any deletion in the collection named (0 if none). */
    public synchronized long maxSeq(KeyedHash.Hash collection) {
        return maxSeq.getOrDefault(collection, 0L);
    }

    @Override
    public void close() throws IOException {
        log.close();
    }
}
