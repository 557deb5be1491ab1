package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.crypto.DataKey;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.RecordCipher;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.FileCopies;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.storage.LiveRecords.Live;
import java.io.Closeable;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Durable, encrypted storage of one collection's records.
 *
 * <p>Every record is sealed (AES-256-GCM) under the data key of its (collection, tenant, subject)
 * scope before any byte of it reaches a file: write-ahead log entries, segments and snapshot copies
 * alike. Subjects hash into {@code shardBuckets} buckets; each bucket's records live in one
 * immutable segment file, rewritten whole at a checkpoint when the bucket changed.
 *
 * <p>Writes: a batch is appended to the write-ahead log and synced (group commit) before it is
 * acknowledged. A checkpoint (when the log passes {@code checkpointBytes}, after every deletion,
 * and on close) rotates the log, rewrites the dirty buckets' segments, commits a new manifest, then
 * deletes the superseded segments and log generations.
 *
 * <p>Deletion: the tombstone journal (outside the data folder) records it first; a subject's key is
 * destroyed next; a forced checkpoint then removes the records' ciphertext from the live files.
 * Every open replays the journal, so a restored snapshot cannot bring back anything deleted after
 * it was taken.
 *
 * <p>Not thread-safe: the owning collection serialises writers.
 */
public final class CollectionStorage implements Closeable {

    /** A record and the ordinal it has in the collection's indexes. */
    public record Placed(int ordinal, VectorRecord record) {}

    /**
     * Receives each live record once while the storage opens. It may also take each stored copy's
     * vector as the copy is decoded, ahead of the admission that decides which copy of an ordinal
     * is live: a million vectors then go straight where they will live instead of waiting on the
     * heap for the last segment.
     */
    @FunctionalInterface
    public interface LoadSink {
        /**
         * A live record, once every copy is admitted, with the version that holds its ordinal. Its
         * vector is absent when {@link #opened} took it from this very version.
         */
        void accept(int ordinal, long seq, VectorRecord record);

        /**
         * Before any copy is decoded: the manifest's next ordinal, above every ordinal its segments
         * hold.
         */
        default void expectOrdinalsBelow(int ordinals) {}

        /**
         * A segment's stored copy the tombstone journal does not delete, just decoded; called on
         * several threads at once, before admission. Returns the record to keep: this one, or one
         * without its vector once the sink has taken it. A sink that takes vectors keeps, for each
         * ordinal, the one of the highest version it was offered, which is the copy admission makes
         * live. Throwing refuses the copy: the open fails if it is admitted.
         */
        default VectorRecord opened(int ordinal, long seq, VectorRecord record) {
            return record;
        }

        /**
         * A copy of {@code record} (whose vector {@link #opened} took) with that vector, for a
         * checkpoint during the open that must seal it again; the caller zeros the vector after.
         */
        default VectorRecord rejoin(int ordinal, long seq, VectorRecord record) {
            throw new IllegalStateException("the sink took no vectors");
        }
    }

    /**
     * What opening found and every recovery decision it took, for tests and operators. Each
     * decision is also logged with the record's keyed hash (never its id or content).
     *
     * @param droppedAsDeleted stored copies the tombstone journal names as deleted (a restored
     *     snapshot, or a crash between a deletion's journal entry and its checkpoint)
     * @param droppedAsSuperseded stored copies of a record at an ordinal a newer version holds; a
     *     sound store never leaves one, so each is logged as a warning
     * @param removedByLogDeletes records the write-ahead log's delete entries removed
     * @param orphanFilesRemoved files no manifest names (a checkpoint cut short)
     * @param idMapRebuilt whether the id map was rebuilt from the records (not closed cleanly)
     * @param idMapRepairs id map entries added, changed or removed to agree with the records
     * @param idMapTrusted whether the id map was used without checking it against the records:
     *     closed cleanly over these very files, with nothing replayed or dropped since
     */
    public record OpenReport(
            int liveRecords,
            int droppedAsDeleted,
            int droppedAsSuperseded,
            int removedByLogDeletes,
            WriteAheadLog.RecoveryReport wal,
            int orphanFilesRemoved,
            boolean idMapRebuilt,
            int idMapRepairs,
            boolean idMapTrusted) {}

    private static final System.Logger LOG = System.getLogger(CollectionStorage.class.getName());

    private final Path dir;
    private final String collectionId;
    private final KeyedHash.Hash collectionHash;
    private final StoreContext ctx;
    private final LiveRecords live;

    /** Where each ordinal's sealed copy is, for reads that take no writer lock. */
    private final StoredCopies copies;

    private final SegmentRewriter rewriter;
    private final StoredCopyOpener opener;
    private Manifest manifest;
    private WriteAheadLog wal;
    private IdMap idMap;
    private long nextSeq;
    private int nextOrdinal;
    private long walBytes;
    private OpenReport openReport;

    /**
     * The manifest's digest when the open found exactly what those files hold (nothing replayed
     * from the log, nothing the journal deletes); else null. See {@link
     * #manifestIfOpenedUnchanged}.
     */
    private byte[] manifestUnchangedAtOpen;

    /** The manifest's digest once {@link #close} finished cleanly; else null. */
    private byte[] manifestAtClose;

    /**
     * Set when the collection is dropped: its files are about to be deleted, nothing is written.
     */
    private boolean dropped;

    /** Set by a subject drop until {@link #purgeDeleted()} rebuilds the id map file. */
    private boolean idMapNeedsFreshFile;

    private CollectionStorage(Path dir, String collectionId, StoreContext ctx, Manifest manifest) {
        this.dir = dir;
        this.collectionId = collectionId;
        this.ctx = ctx;
        this.collectionHash = ctx.hashes().of("collection", collectionId);
        this.manifest = manifest;
        this.live = new LiveRecords(manifest.buckets());
        this.copies = new StoredCopies(dir, manifest.buckets());
        this.rewriter = new SegmentRewriter(dir, ctx, live, copies);
        this.opener = new StoredCopyOpener(ctx, collectionId, collectionHash);
    }

    /**
     * Starts, once per JVM, the one-off work the first storage open would otherwise do on its own
     * path (see {@link IdMap}), so that it runs beside whatever the caller opens first.
     */
    public static void warmUpInBackground() {
        IdMap.warmUpInBackground();
    }

    /**
     * Opens a collection's storage in {@code dir}, handing every live record to {@code sink}.
     * Records the tombstone journal names are dropped (and, by a checkpoint before this returns,
     * physically removed); a torn log tail is dropped and reported.
     *
     * @param collectionId the collection's random incarnation id (from its meta file)
     */
    public static CollectionStorage open(
            Path dir, String collectionId, StoreContext ctx, LoadSink sink) throws IOException {
        warmUpInBackground();
        Files.createDirectories(dir.resolve("segments"));
        Manifest m =
                Files.exists(dir.resolve(Manifest.FILE))
                        ? Manifest.read(dir)
                        : Manifest.empty(ctx.shardBuckets());
        CollectionStorage s = new CollectionStorage(dir, collectionId, ctx, m);
        try {
            s.load(sink);
        } catch (IOException | RuntimeException e) {
            s.closeQuietly();
            throw e;
        }
        return s;
    }

    public OpenReport openReport() {
        return openReport;
    }

    /**
     * Recovers the state the files hold (see {@link StorageRecovery}), then hands it to the sink.
     */
    private void load(LoadSink sink) throws IOException {
        rewriter.loading(sink);
        StorageRecovery r =
                new StorageRecovery(dir, ctx, collectionHash, manifest, live, copies, opener);
        try {
            r.run(sink);
        } finally {
            wal = r.wal(); // closed by the caller if the open fails
            idMap = r.idMap();
        }
        walBytes = r.walBytes();
        nextSeq = r.nextSeq();
        nextOrdinal = r.nextOrdinal();
        manifestUnchangedAtOpen = r.manifestUnchangedAtOpen();
        r.handOver(sink, () -> checkpoint(true));
        rewriter.loading(null);
        openReport = r.report();
    }

    // ---- writes ----------------------------------------------------------------------------

    /** The store's read-only latch, which the first failed write trips. */
    public StorageFault fault() {
        return ctx.fault();
    }

    /** The next free ordinal (the collection may also reuse ordinals it freed). */
    public int nextOrdinal() {
        return nextOrdinal;
    }

    /**
     * Durably stores a batch. {@code replaced} are the records the batch supersedes (same tenant
     * and id); their old versions are deleted in the same log write. The id map still resolves the
     * batch's ids as before (the replaced versions, or nothing) until {@link #publishIds}: the
     * caller makes the new records readable first, so a lookup never falls into the gap between the
     * two versions.
     */
    public void put(List<Placed> batch, List<Placed> replaced) throws IOException {
        List<byte[]> entries = new ArrayList<>(batch.size() + replaced.size());
        List<Live> added = new ArrayList<>(batch.size());
        List<SealedRecord> sealedCopies = new ArrayList<>(batch.size());
        for (Placed p : replaced) {
            entries.add(LogEntries.delete(p.ordinal(), nextSeq));
        }
        for (Placed p : batch) {
            long seq = nextSeq++;
            VectorRecord r = p.record();
            KeyedHash.Hash subject = ctx.scopeHash(collectionId, r.tenant(), r.subject());
            KeyedHash.Hash record = ctx.hashes().record(r.tenant(), r.id());
            DataKey key = ctx.keystore().getOrCreate(subject);
            byte[] sealed =
                    ctx.sealer()
                            .seal(
                                    key,
                                    RecordCipher.aad(subject, record, seq),
                                    RecordCodec.encode(r));
            SealedRecord s = new SealedRecord(p.ordinal(), seq, subject, record, sealed);
            entries.add(LogEntries.put(s));
            added.add(new Live(p.ordinal(), null, seq, subject, record));
            sealedCopies.add(s);
        }
        copies.addPending(sealedCopies);
        try {
            wal.sync(wal.append(entries));
        } catch (IOException | RuntimeException e) {
            // Not acknowledged: no checkpoint may fold these copies into a segment.
            copies.withdrawPending(sealedCopies);
            throw e;
        }
        for (byte[] e : entries) {
            walBytes += e.length + 8;
        }
        for (Placed p : replaced) {
            forget(p.ordinal(), false); // its id is remapped to the new version by publishIds
        }
        for (Live l : added) {
            live.put(l);
            live.markDirty(l.subject());
            nextOrdinal = Math.max(nextOrdinal, l.ordinal() + 1);
        }
    }

    /** Points the id map at a stored batch's new records (see {@link #put}). */
    public void publishIds(List<Placed> batch) {
        for (Placed p : batch) {
            Live l = live.get(p.ordinal());
            if (l != null) {
                idMap.put(l.recordHash(), l.ordinal());
            }
        }
    }

    /** Checkpoints when the log has grown past {@code checkpointBytes}; returns whether it did. */
    public boolean checkpointIfDue() throws IOException {
        boolean due = walBytes >= ctx.checkpointBytes();
        checkpoint(false);
        return due;
    }

    /**
     * Deletes records durably: journal entry, then log entry. Their ciphertext leaves the live
     * files at {@link #purgeDeleted()}, which the caller runs next.
     */
    public void delete(List<Placed> removed) throws IOException {
        if (removed.isEmpty()) {
            return;
        }
        long seq = nextSeq++;
        List<KeyedHash.Hash> hashes = new ArrayList<>();
        for (Placed p : removed) {
            hashes.add(ctx.hashes().record(p.record().tenant(), p.record().id()));
        }
        ctx.journal().recordsDeleted(collectionHash, hashes, seq);
        List<byte[]> entries = new ArrayList<>();
        for (Placed p : removed) {
            entries.add(LogEntries.delete(p.ordinal(), seq));
        }
        wal.sync(wal.append(entries));
        for (Placed p : removed) {
            forget(p.ordinal());
        }
    }

    /**
     * Deletes every record of one (tenant, subject) in this collection and destroys the scope's
     * data key, so any copy of its ciphertext anywhere (old log generations, snapshots, backups) is
     * unreadable. {@link #purgeDeleted()}, which the caller runs next, then rewrites the live files
     * without it.
     */
    public void dropSubject(String tenant, String subject, List<Placed> removed)
            throws IOException {
        KeyedHash.Hash scope = ctx.scopeHash(collectionId, tenant, subject);
        long seq = nextSeq++;
        ctx.journal().subjectDropped(collectionHash, scope, seq);
        List<byte[]> entries = new ArrayList<>();
        for (Placed p : removed) {
            entries.add(LogEntries.delete(p.ordinal(), seq));
        }
        if (!entries.isEmpty()) {
            wal.sync(wal.append(entries));
        }
        for (Placed p : removed) {
            forget(p.ordinal());
        }
        ctx.keystore().destroy(scope);
        idMapNeedsFreshFile = true;
    }

    /**
     * Removes deleted records' ciphertext from the live files: a forced checkpoint, and after a
     * subject drop a fresh id map file (Chronicle Map keeps removed entries' bytes). If this fails
     * the deletion still stands (it is journaled); the next checkpoint retries.
     */
    public void purgeDeleted() throws IOException {
        checkpoint(true);
        if (idMapNeedsFreshFile) {
            idMap.reconcile(live.hashes(), true);
            idMapNeedsFreshFile = false;
        }
    }

    /** Destroys the keys of every scope this collection holds; used when it is dropped. */
    public void destroyAllKeys() throws IOException {
        dropped = true;
        ctx.journal().collectionDropped(collectionHash);
        Set<KeyedHash.Hash> scopes = new HashSet<>();
        for (Live l : live.values()) {
            scopes.add(l.subject());
        }
        for (KeyedHash.Hash s : scopes) {
            ctx.keystore().destroy(s);
        }
    }

    /**
     * Finishes the drop of a collection found on disk although the journal says it was dropped:
     * destroys the key of every scope its files name (read from the clear-text headers, nothing is
     * decrypted). The caller then deletes the folder.
     */
    public static void purgeDropped(Path dir, String collectionId, StoreContext ctx)
            throws IOException {
        StorageRecovery.finishDrop(dir, ctx);
    }

    private void forget(int ordinal) {
        forget(ordinal, true);
    }

    private void forget(int ordinal, boolean unmapId) {
        if (unmapId) {
            // A replaced record's copy stays readable until the checkpoint: a get that found the
            // old version before the id map moves on still reads its text (see readStored).
            copies.dropPending(ordinal);
        }
        Live gone = live.remove(ordinal);
        if (gone != null) {
            live.markDirty(gone.subject());
            if (unmapId) {
                idMap.remove(gone.recordHash());
            }
        }
    }

    // ---- lookups ---------------------------------------------------------------------------

    /** The ordinal of (tenant, id), or -1: a lookup in the persistent id map. */
    public int ordinalOf(String tenant, String id) {
        return idMap.get(ctx.hashes().record(tenant, id));
    }

    /** Number of live records. */
    public int size() {
        return live.size();
    }

    /**
     * Destroys the data key of (tenant, subject) after its records were deleted, journaling the
     * drop first (so a restore drops whatever the key sealed). Does nothing when the scope never
     * had a key here.
     *
     * @return true if a key was destroyed
     */
    public boolean destroySubjectKey(String tenant, String subject) throws IOException {
        KeyedHash.Hash scope = ctx.scopeHash(collectionId, tenant, subject);
        if (ctx.keystore().find(scope) == null) {
            return false;
        }
        ctx.journal().subjectDropped(collectionHash, scope, nextSeq++);
        return ctx.keystore().destroy(scope);
    }

    /** Whether the data key of (tenant, subject) in this collection still exists. */
    public boolean hasKey(String tenant, String subject) throws IOException {
        return ctx.keystore().find(ctx.scopeHash(collectionId, tenant, subject)) != null;
    }

    /** The version (write sequence number) of a live record, or -1. */
    public long versionOf(int ordinal) {
        Live l = live.get(ordinal);
        return l == null ? -1 : l.seq();
    }

    /**
     * Reads and decrypts the stored copy of the record at {@code ordinal}: the log's copy if it
     * came after the last checkpoint, else the one in its bucket's segment. Takes no writer lock (a
     * get or a search runs it). The copy may be of a record that has since left the ordinal, or of
     * the one that took it: the caller checks the record against the one it asked for.
     *
     * @return the record, vector and all (the caller wipes what it does not keep), or null when the
     *     ordinal has no copy at hand or its scope's key is gone (forgotten meanwhile)
     * @throws CorruptFileException when the copy where it should be is not a copy of this ordinal
     *     or does not decrypt, naming the file
     */
    public VectorRecord readStored(int ordinal) throws IOException {
        StoredCopies.Found found = copies.find(ordinal);
        return found == null ? null : opener.read(found, ordinal);
    }

    /** What a byte scan for deleted records found: occurrences and the files holding them. */
    public record Residue(long occurrences, List<String> files, int filesScanned) {}

    /**
     * Byte-scans every live file that could hold a copy of these (deleted) records: the segments of
     * their shard buckets and every write-ahead log generation. It looks for the keyed hash each
     * sealed copy carries in clear, at any offset, so a copy is found whether or not the file still
     * parses. (The id map is not scanned: a removed entry's key bytes may stay in its free space,
     * and they are the same keyed hash the tombstone journal keeps on purpose; the map is checked
     * by lookup instead.)
     */
    public Residue scanForCopies(List<VectorRecord> deleted) throws IOException {
        return CopyForensics.scanLive(dir, ctx, collectionId, manifest, live, deleted);
    }

    /**
     * Rewrites a snapshot copy of a collection (a folder written by {@link #snapshotTo}) without
     * the sealed records whose keyed hashes are given: each segment holding one is replaced by a
     * new file, then the snapshot's manifest names the new files. Nothing is decrypted (the hashes
     * are in the clear headers).
     *
     * @return how many sealed records were removed
     */
    public static int purgeSnapshotCopy(Path snapshotDir, Set<KeyedHash.Hash> recordHashes)
            throws IOException {
        return CopyForensics.purgeSnapshotCopy(snapshotDir, recordHashes);
    }

    /** Occurrences of the given keyed hashes in any file of a snapshot copy of a collection. */
    public static long scanSnapshotCopy(Path snapshotDir, List<byte[]> recordHashes)
            throws IOException {
        return CopyForensics.scanSnapshotCopy(snapshotDir, recordHashes);
    }

    /**
     * The write sequence number the next write will get: a snapshot taken now holds every version
     * below it.
     */
    public long nextVersion() {
        return nextSeq;
    }

    /**
     * Takes the next version as a floor and journals it (fsynced): every write from now on gets a
     * higher version, here and after any reopen, even over restored older files. A re-admission
     * takes one so that records written after it can be told from records of before by version.
     * With a subject, the journal also learns that the subject's scope came back: a key it gets
     * from now on is a new one, which a replay of its earlier drop leaves alone.
     *
     * @param tenant the re-admitted subject's tenant (unused without a subject)
     * @param subject the re-admitted subject, or null for a re-admission of record ids
     * @return the floor: every record written before this call has a lower version, every later one
     *     a higher
     */
    public long reserveVersionFloor(String tenant, String subject) throws IOException {
        long floor = nextSeq++;
        if (subject == null) {
            ctx.journal().versionFloor(collectionHash, floor);
        } else {
            ctx.journal()
                    .subjectReadmitted(
                            collectionHash, ctx.scopeHash(collectionId, tenant, subject), floor);
        }
        return floor;
    }

    /**
     * Makes every later write's version higher than {@code version} (the journal that would have
     * ensured it at open may have been lost); the next checkpoint's manifest keeps it.
     */
    public void ensureVersionAbove(long version) {
        nextSeq = Math.max(nextSeq, version + 1);
    }

    // ---- checkpoints and snapshots ---------------------------------------------------------

    /**
     * Folds the log into segments: rotate the log, rewrite each dirty bucket's segment (see {@link
     * SegmentRewriter}), commit a manifest naming the new files, then delete the superseded
     * segments and log generations.
     *
     * @param force checkpoint even when the log is small (deletions always force one)
     */
    public void checkpoint(boolean force) throws IOException {
        if (!force && walBytes < ctx.checkpointBytes()) {
            return;
        }
        long gen = wal.rotate();
        Map<Integer, String> segments = new HashMap<>(manifest.segments());
        List<String> superseded = new ArrayList<>();
        long nextSegment = manifest.nextSegmentId();
        List<StoredCopies.Rewritten> rewritten = new ArrayList<>();
        BitSet dirty = live.dirty();
        for (int b = dirty.nextSetBit(0); b >= 0; b = dirty.nextSetBit(b + 1)) {
            String old = segments.remove(b);
            if (old != null) {
                superseded.add(old);
            }
            StoredCopies.Rewritten r = rewriter.rewrite(b, old, nextSegment);
            if (r.name != null) {
                nextSegment++;
                segments.put(b, r.name);
            }
            rewritten.add(r);
        }
        ChecksummedFiles.fsyncDirectory(dir.resolve("segments"));
        manifest =
                new Manifest(manifest.buckets(), nextSeq, nextOrdinal, gen, nextSegment, segments);
        manifest.write(dir, ctx.testPoints());
        // Reads move to the new files before the old ones go; the log's copies are in them now.
        copies.publish(rewritten);
        for (String s : superseded) {
            Files.deleteIfExists(dir.resolve("segments").resolve(s));
            ctx.testPoints().reached("checkpoint.deleted-segment");
        }
        ChecksummedFiles.fsyncDirectory(dir.resolve("segments"));
        wal.deleteBefore(gen);
        dirty.clear();
        walBytes = 0;
    }

    /**
     * Lends the plaintext of the live record at an ordinal: calls {@code use} with a copy of the
     * record (vector included; null when there is none) and wipes the copy once it returns.
     */
    @FunctionalInterface
    public interface PlaintextLender {
        byte[] lend(int ordinal, Function<VectorRecord, byte[]> use);
    }

    /**
     * Where a checkpoint reads a live record's plaintext when neither the log nor the bucket's
     * segment holds its sealed bytes. The collection sets it once its catalogue holds the records.
     */
    public void readPlaintextFrom(PlaintextLender lender) {
        rewriter.readPlaintextFrom(lender);
    }

    /**
     * Copies a consistent image of this collection's data files into {@code target}: the manifest
     * and the segments it names. The caller checkpoints first and lets no write in until the copy
     * is done, so the log holds nothing the segments lack. The keystore is never copied.
     */
    public void snapshotTo(Path target) throws IOException {
        if (walBytes > 0 || !live.dirty().isEmpty()) {
            throw new IllegalStateException(
                    "snapshot needs a checkpoint first: the log holds unfolded writes");
        }
        Files.createDirectories(target.resolve("segments"));
        // Never through a link: one planted among the data files is refused, not its target copied.
        for (String s : manifest.segments().values()) {
            FileCopies.copyRegularFile(
                    dir.resolve("segments").resolve(s),
                    target.resolve("segments").resolve(s),
                    StandardCopyOption.COPY_ATTRIBUTES);
        }
        FileCopies.copyRegularFile(dir.resolve(Manifest.FILE), target.resolve(Manifest.FILE));
    }

    @Override
    public void close() throws IOException {
        byte[] stamp = new byte[0];
        try {
            if (!dropped && (walBytes > 0 || !live.dirty().isEmpty() || idMapNeedsFreshFile)) {
                purgeDeleted();
            }
            if (!dropped) {
                byte[] manifestNow = Manifest.digest(dir);
                stamp = manifestNow == null ? stamp : IdMap.closeStamp(manifestNow, live.size());
                manifestAtClose = manifestNow;
            }
        } finally {
            closeQuietly(stamp);
        }
    }

    /**
     * The digest of the manifest this open loaded, if the records it admitted are exactly what
     * those files hold: nothing replayed from the write-ahead log, nothing the tombstone journal
     * deletes. Null otherwise, or when there was no manifest. Reconciliation compares it with the
     * digest a clean close recorded beside the keys ({@link #manifestAtClose}).
     */
    public byte[] manifestIfOpenedUnchanged() {
        return manifestUnchangedAtOpen == null ? null : manifestUnchangedAtOpen.clone();
    }

    /**
     * The digest of the manifest as a clean {@link #close} left it (everything checkpointed), or
     * null before then, after a close that failed, or for a dropped collection.
     */
    public byte[] manifestAtClose() {
        return manifestAtClose == null ? null : manifestAtClose.clone();
    }

    private void closeQuietly() {
        closeQuietly(new byte[0]);
    }

    /**
     * Closes after an open whose caller could not take the records (one failed its checks), as a
     * failed load closes: nothing checkpointed or purged, the id map not stamped as closed cleanly,
     * so the next open checks it against the records again.
     */
    public void abandon() {
        closeQuietly();
    }

    private void closeQuietly(byte[] idMapStamp) {
        copies.retireAll();
        if (wal != null) {
            closeLogged(wal::close, "write-ahead log");
        }
        if (idMap != null) {
            closeLogged(() -> idMap.close(idMapStamp), "id map");
        }
    }

    private interface IoCloser {
        void close() throws IOException;
    }

    private void closeLogged(IoCloser closer, String what) {
        try {
            closer.close();
        } catch (IOException e) {
            LOG.log(Level.WARNING, "closing the {0} of {1} failed: {2}", what, dir, e.getMessage());
        }
    }
}
