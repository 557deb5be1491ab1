package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.Durability;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.storage.LiveRecords.Live;
import dev.nepenthe.core.internal.storage.StoredCopyOpener.LastSubject;
import dev.nepenthe.core.internal.storage.StoredCopyOpener.OpenBuffers;
import dev.nepenthe.core.internal.storage.StoredCopyOpener.Opened;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.roaringbitmap.IntIterator;

/**
 * Rebuilds a collection's storage state from its files as it opens: removes what no manifest names,
 * opens every segment's copies (in parallel) and admits them in manifest order, replays the
 * write-ahead log, finishes subject drops a crash cut short and checks the id map against the
 * records. It exists apart from {@link CollectionStorage} because each of these decisions is taken
 * once, at the open, and every one is counted for the {@link CollectionStorage.OpenReport} and
 * logged with the record's keyed hash (never its id or content).
 *
 * <p>One-shot: {@link #run} fills the given live records and stored copies, then the accessors say
 * what else the storage carries on from.
 */
final class StorageRecovery {
    private static final System.Logger LOG = System.getLogger(CollectionStorage.class.getName());

    private final Path dir;
    private final StoreContext ctx;
    private final KeyedHash.Hash collectionHash;
    private final Manifest manifest;
    private final LiveRecords live;
    private final StoredCopies copies;
    private final StoredCopyOpener opener;

    // What the open decided, as it decides it.
    private int deleted;
    private int superseded;
    private int logDeletes;

    private WriteAheadLog wal;
    private IdMap idMap;
    private long walBytes;
    private long nextSeq;
    private int nextOrdinal;
    private byte[] manifestUnchangedAtOpen;
    private CollectionStorage.OpenReport report;

    StorageRecovery(
            Path dir,
            StoreContext ctx,
            KeyedHash.Hash collectionHash,
            Manifest manifest,
            LiveRecords live,
            StoredCopies copies,
            StoredCopyOpener opener) {
        this.dir = dir;
        this.ctx = ctx;
        this.collectionHash = collectionHash;
        this.manifest = manifest;
        this.live = live;
        this.copies = copies;
        this.opener = opener;
    }

    /**
     * Loads every live record into the live records (each with its plaintext, which {@code sink}
     * takes next) and every copy's place into the stored copies, opens the log and the id map.
     * Copies the journal deletes are dropped here; removing them from the files is the checkpoint's
     * job, which the storage runs next when {@link #removedStored()}.
     */
    void run(CollectionStorage.LoadSink sink) throws IOException {
        byte[] manifestAtOpen = Manifest.digest(dir);
        int orphans = removeOrphans();
        long maxSeq = 0;
        int maxOrdinal = -1;
        // Opening the records (decrypting, decoding, checking their hashes) is most of an open's
        // work and each record's is its own: every core opens segments, then the records are
        // admitted one by one in manifest order, with the same decisions as before.
        List<Map.Entry<Integer, String>> files = new ArrayList<>(manifest.segments().entrySet());
        int[] handles = new int[files.size()];
        for (int i = 0; i < files.size(); i++) {
            handles[i] = copies.install(files.get(i).getKey(), files.get(i).getValue());
        }
        sink.expectOrdinalsBelow(manifest.nextOrdinal());
        List<List<Opened>> opened = openSegments(files, handles, sink);
        for (int i = 0; i < files.size(); i++) {
            Path f = dir.resolve("segments").resolve(files.get(i).getValue());
            for (Opened o : opened.get(i)) {
                admit(o, f);
                maxSeq = Math.max(maxSeq, o.stored().seq());
                maxOrdinal = Math.max(maxOrdinal, o.stored().ordinal());
            }
        }
        opened = null;
        long[] walMax = {0, -1};
        WriteAheadLog.RecoveryReport[] walReport = new WriteAheadLog.RecoveryReport[1];
        Path walDir = dir.resolve("wal");
        wal =
                WriteAheadLog.open(
                        walDir,
                        ctx.durability(),
                        (gen, payload) -> replay(gen, payload, walDir, walMax),
                        walReport,
                        ctx.testPoints());
        wal.deleteBefore(manifest.walGeneration());
        nextSeq =
                Math.max(
                        Math.max(manifest.nextSeq(), Math.max(maxSeq, walMax[0]) + 1),
                        ctx.journal().maxSeq(collectionHash) + 1);
        nextOrdinal = Math.max(manifest.nextOrdinal(), (int) Math.max(maxOrdinal, walMax[1]) + 1);

        destroyKeysOfDroppedSubjects();
        idMap = new IdMap(dir.resolve("idmap.cmap"), Math.max(1024, live.size() * 2L));
        boolean removedStored = deleted + superseded > 0;
        // After a clean close over these very files, with nothing replayed or dropped since, the
        // map agrees with the records already; anything else (a crash, a restored snapshot, a
        // log to replay) checks it against them.
        if (!removedStored && walReport[0].entries() == 0) {
            manifestUnchangedAtOpen = manifestAtOpen;
        }
        boolean trusted =
                !removedStored
                        && walReport[0].entries() == 0
                        && manifestAtOpen != null
                        && Arrays.equals(
                                idMap.closedWith(), IdMap.closeStamp(manifestAtOpen, live.size()))
                        && idMap.size() == live.size();
        int repairs = trusted ? 0 : idMap.reconcile(live.hashes(), removedStored);
        report =
                new CollectionStorage.OpenReport(
                        live.size(),
                        deleted,
                        superseded,
                        logDeletes,
                        walReport[0],
                        orphans,
                        idMap.rebuiltAtOpen(),
                        repairs,
                        trusted);
    }

    /** A checkpoint of the storage being opened. */
    interface Checkpoint {
        void run() throws IOException;
    }

    /**
     * Once the storage carries on from what {@link #run} found: removes the copies the open dropped
     * from the live files (by {@code checkpoint}), then hands every live record to {@code sink} and
     * lets go of its plaintext.
     */
    void handOver(CollectionStorage.LoadSink sink, Checkpoint checkpoint) throws IOException {
        if (removedStored()) {
            // Something deleted after these files were written (a restored snapshot, or a crash
            // between the journal entry and the checkpoint): remove it from the live files now.
            checkpoint.run();
        }
        for (Live l : live.values()) {
            sink.accept(l.ordinal(), l.seq(), l.record());
        }
        // The records are the sink's now: the storage keeps no plaintext of its own.
        live.dropPlaintext();
        if (recovered()) {
            LOG.log(Level.INFO, "{0}: opened with recovery: {1}", dir, report);
        }
    }

    /** Decrypts and decodes every segment's copies, each segment on a core of its own. */
    private List<List<Opened>> openSegments(
            List<Map.Entry<Integer, String>> files, int[] handles, CollectionStorage.LoadSink sink)
            throws IOException {
        try {
            return IntStream.range(0, files.size())
                    .parallel()
                    .mapToObj(
                            i -> {
                                Map.Entry<Integer, String> e = files.get(i);
                                try {
                                    Path f = dir.resolve("segments").resolve(e.getValue());
                                    List<Opened> out = new ArrayList<>();
                                    LastSubject subjects = opener.new LastSubject();
                                    OpenBuffers buffers = new OpenBuffers();
                                    SegmentFiles.forEach(
                                            f,
                                            e.getKey(),
                                            (header, wasSealed, length, offset) ->
                                                    out.add(
                                                            opener.open(
                                                                            header, wasSealed,
                                                                            length, sink, subjects,
                                                                            buffers)
                                                                    .at(handles[i], offset)));
                                    return out;
                                } catch (IOException x) {
                                    throw new UncheckedIOException(x);
                                }
                            })
                    .toList();
        } catch (UncheckedIOException x) {
            throw x.getCause();
        }
    }

    /** Replays one write-ahead log entry of generation {@code gen}. */
    private void replay(long gen, byte[] payload, Path walDir, long[] walMax) throws IOException {
        if (gen < manifest.walGeneration()) {
            return; // already folded into segments by a checkpoint that crashed before deleting it
        }
        ByteBuffer b = ByteBuffer.wrap(payload);
        byte type = b.get();
        if (type == LogEntries.PUT) {
            SealedRecord r = LogEntries.readPut(payload);
            // The log's copies keep their vectors: they are few, and admitted as they come.
            admit(opener.open(r, null, opener.new LastSubject(), new OpenBuffers()), walDir);
            Live admitted = live.get(r.ordinal());
            if (admitted != null && admitted.seq() == r.seq()) {
                copies.addPending(List.of(r));
            }
            // Only in the log so far: the next checkpoint must write it into its bucket.
            live.markDirty(r.subject());
            walBytes += payload.length + 8;
            walMax[0] = Math.max(walMax[0], r.seq());
            walMax[1] = Math.max(walMax[1], r.ordinal());
        } else if (type == LogEntries.DELETE) {
            int ord = b.getInt();
            long deletionSeq = b.getLong();
            walMax[0] = Math.max(walMax[0], deletionSeq);
            walBytes += payload.length + 8;
            // The entry deletes what held the ordinal before the deletion, never a newer record
            // that reused the ordinal (one loaded from a segment, for instance).
            Live gone = live.get(ord);
            if (gone != null && gone.seq() < deletionSeq) {
                live.remove(ord);
                live.markDirty(gone.subject());
                logDeletes++;
                LOG.log(
                        Level.DEBUG,
                        "{0}: record {1} (version {2}) removed by a logged delete at version {3}",
                        dir,
                        gone.recordHash(),
                        gone.seq(),
                        deletionSeq);
            }
        } else {
            throw new CorruptFileException(walDir, "write-ahead log entry of unknown type " + type);
        }
    }

    /**
     * Loads one stored copy of a record, opened by {@link StoredCopyOpener}: keeps it, unless the
     * journal says it was deleted. Ordinals are reused, and segments load in no particular order,
     * so an ordinal may be claimed by a deleted record and by the newer record that took its
     * ordinal over: the copy with the higher sequence number holds the ordinal, and a deleted copy
     * only ever removes itself, never a different record at its ordinal.
     */
    private void admit(Opened o, Path where) throws IOException {
        SealedRecord r = o.stored();
        if (ctx.journal().isDeleted(collectionHash, r.record(), r.subject(), r.seq())) {
            deleted++;
            LOG.log(
                    Level.INFO,
                    "{0}: dropped a stored copy of record {1} (version {2}): the tombstone journal"
                            + " deletes it",
                    where,
                    r.record(),
                    r.seq());
            live.markDirty(r.subject());
            Live current = live.get(r.ordinal());
            if (current != null
                    && current.seq() == r.seq()
                    && current.recordHash().equals(r.record())) {
                live.remove(r.ordinal());
            }
            return;
        }
        Live holder = live.get(r.ordinal());
        if (holder != null && holder.seq() > r.seq()) {
            // A stale copy of a record whose ordinal a newer record took over: not live. Its
            // bucket is rewritten without it at the checkpoint the open runs.
            superseded++;
            LOG.log(
                    Level.WARNING,
                    "{0}: dropped a stored copy of record {1} (version {2}): ordinal {3} is held by"
                            + " record {4} (version {5}) and no deletion names the older copy",
                    where,
                    r.record(),
                    r.seq(),
                    r.ordinal(),
                    holder.recordHash(),
                    holder.seq());
            live.markDirty(r.subject());
            return;
        }
        o.throwIfFailed(where);
        Live old = live.put(new Live(r.ordinal(), o.record(), r.seq(), r.subject(), r.record()));
        if (o.segment() != 0) {
            copies.place(r.ordinal(), o.segment(), o.offset()); // a log copy is pending instead
        }
        if (old != null) {
            live.markDirty(old.subject());
        }
    }

    /**
     * A crash between a subject drop's journal entry and its key destruction leaves the key in the
     * keystore; finish the job. A scope with live records newer than the drop has a new key (the
     * subject came back), which stays; so does the key of a scope re-admitted after its drop (a
     * forget's drop is sealed, key destroyed, before a re-admission can follow it), whose records
     * may be missing here only because older files were restored.
     */
    private void destroyKeysOfDroppedSubjects() throws IOException {
        Map<KeyedHash.Hash, Long> drops = ctx.journal().subjectDrops(collectionHash);
        if (drops.isEmpty()) {
            return;
        }
        Map<KeyedHash.Hash, Long> readmitted = ctx.journal().subjectReadmissions(collectionHash);
        for (Map.Entry<KeyedHash.Hash, Long> drop : drops.entrySet()) {
            // Only the dropped subject's bucket can hold its records: what a drop costs here is
            // its bucket, not the collection.
            Long latest = null;
            for (IntIterator it = live.bucketOf(drop.getKey()).getIntIterator(); it.hasNext(); ) {
                Live l = live.get(it.next());
                if (l != null
                        && l.subject().equals(drop.getKey())
                        && (latest == null || l.seq() > latest)) {
                    latest = l.seq();
                }
            }
            Long back = readmitted.get(drop.getKey());
            if ((latest == null || latest < drop.getValue())
                    && (back == null || back < drop.getValue())) {
                ctx.keystore().destroy(drop.getKey());
            }
        }
    }

    /** Deletes segment files the manifest does not name and temporary files of a crashed write. */
    private int removeOrphans() throws IOException {
        Set<String> named = new HashSet<>(manifest.segments().values());
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir.resolve("segments"))) {
            for (Path f : files) {
                if (!named.contains(f.getFileName().toString())) {
                    Files.delete(f);
                    removed++;
                    LOG.log(
                            Level.INFO,
                            "{0}: removed {1}, which no manifest names (a checkpoint cut short)",
                            dir,
                            f.getFileName());
                }
            }
        }
        Files.deleteIfExists(dir.resolve(Manifest.FILE + ".tmp"));
        return removed;
    }

    /**
     * Finishes the drop of a collection found on disk although the journal says it was dropped:
     * destroys the key of every scope its files name (read from the clear-text headers, nothing is
     * decrypted).
     */
    static void finishDrop(Path dir, StoreContext ctx) throws IOException {
        Set<KeyedHash.Hash> scopes = new HashSet<>();
        if (Files.exists(dir.resolve(Manifest.FILE))) {
            Manifest m = Manifest.read(dir);
            for (Map.Entry<Integer, String> e : m.segments().entrySet()) {
                Path f = dir.resolve("segments").resolve(e.getValue());
                if (Files.exists(f)) {
                    for (SealedRecord r : SegmentFiles.read(f, e.getKey())) {
                        scopes.add(r.subject());
                    }
                }
            }
        }
        if (Files.isDirectory(dir.resolve("wal"))) {
            WriteAheadLog.open(
                            dir.resolve("wal"),
                            Durability.ASYNC,
                            (gen, payload) -> {
                                if (payload.length > 0 && payload[0] == LogEntries.PUT) {
                                    scopes.add(LogEntries.readPut(payload).subject());
                                }
                            },
                            null)
                    .close();
        }
        for (KeyedHash.Hash s : scopes) {
            ctx.keystore().destroy(s);
        }
    }

    /**
     * Whether the open dropped stored copies, which a checkpoint must now remove from the files.
     */
    boolean removedStored() {
        return deleted + superseded > 0;
    }

    /** Whether the open had anything to recover, worth a line in the log. */
    private boolean recovered() {
        return removedStored()
                || report.orphanFilesRemoved() > 0
                || report.wal().tornBytesDropped() > 0
                || report.idMapRebuilt();
    }

    WriteAheadLog wal() {
        return wal;
    }

    IdMap idMap() {
        return idMap;
    }

    long walBytes() {
        return walBytes;
    }

    long nextSeq() {
        return nextSeq;
    }

    int nextOrdinal() {
        return nextOrdinal;
    }

    /** See {@link CollectionStorage#manifestIfOpenedUnchanged}. */
    byte[] manifestUnchangedAtOpen() {
        return manifestUnchangedAtOpen;
    }

    CollectionStorage.OpenReport report() {
        return report;
    }
}
