package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.Durability;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.crypto.DataKey;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.RecordCipher;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.io.FileCopies;
import dev.nepenthe.core.internal.io.IoErrors;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import javax.crypto.AEADBadTagException;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

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

    /** Counts of the open's recovery decisions, as they are taken. */
    private static final class Decisions {
        int deleted;
        int superseded;
        int logDeletes;
    }

    /**
     * A live record as the storage tracks it. {@code record} is held only while the storage opens,
     * until the sink has it: after that the plaintext lives in the collection's catalogue alone,
     * and a checkpoint that must seal a record again borrows it (see {@link #readPlaintextFrom}).
     */
    private record Live(
            int ordinal,
            VectorRecord record,
            long seq,
            KeyedHash.Hash subject,
            KeyedHash.Hash recordHash) {
        Live withoutRecord() {
            return new Live(ordinal, null, seq, subject, recordHash);
        }
    }

    /**
     * Live records by ordinal, in an array: ordinals are dense, and a map's boxed keys and nodes
     * would cost more per record than the record's own fields.
     */
    private static final class LiveTable {
        private Live[] slots = new Live[16];
        private int size;

        Live get(int ordinal) {
            return ordinal >= 0 && ordinal < slots.length ? slots[ordinal] : null;
        }

        /** Puts {@code l} at {@code ordinal}; returns what was there, or null. */
        Live put(int ordinal, Live l) {
            if (ordinal >= slots.length) {
                slots =
                        Arrays.copyOf(
                                slots, Math.max(ordinal + 1, slots.length + (slots.length >> 1)));
            }
            Live old = slots[ordinal];
            slots[ordinal] = l;
            if (old == null) {
                size++;
            }
            return old;
        }

        Live remove(int ordinal) {
            Live old = get(ordinal);
            if (old != null) {
                slots[ordinal] = null;
                size--;
            }
            return old;
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
    }

    private static final byte PUT = 1, DELETE = 2;
    private static final System.Logger LOG = System.getLogger(CollectionStorage.class.getName());

    private final Path dir;
    private final String collectionId;
    private final KeyedHash.Hash collectionHash;
    private final StoreContext ctx;
    private final LiveTable byOrdinal = new LiveTable();

    /** Each shard bucket's live ordinals. */
    private final List<RoaringBitmap> buckets;

    private final BitSet dirty = new BitSet();

    /**
     * Sealed bytes of records written since the last checkpoint (from the log), so the checkpoint
     * copies them into segments instead of encrypting them again.
     */
    private final Map<Integer, SealedRecord> pendingSealed = new HashMap<>();

    /**
     * Guards what {@link #readStored} looks at: {@link #pendingSealed}, each ordinal's copy ({@link
     * #copySegment}, {@link #copyOffset}) and the open segment files. The writer holds the write
     * lock only while it changes those, never while it writes a file.
     */
    private final ReentrantReadWriteLock copies = new ReentrantReadWriteLock();

    /**
     * Per ordinal, the segment file holding its copy (a handle into {@link #segmentFiles}, 0 for
     * none) and where that copy starts. An ordinal whose record left keeps its last copy here until
     * the ordinal is reused or the copy's segment is replaced: a reader checks what it read against
     * the record it asked for.
     */
    private int[] copySegment = new int[16];

    private long[] copyOffset = new long[16];

    /** The live segment files by handle. A handle is never reused. */
    private final Map<Integer, SegmentFile> segmentFiles = new HashMap<>();

    /** Each bucket's current segment file (its handle; 0 for none). */
    private final int[] bucketSegment;

    private int nextSegmentHandle = 1;
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

    /**
     * The sink of the open in progress (null after it): holds the vectors a checkpoint at open
     * reseals.
     */
    private LoadSink loading;

    /** Lends a live record's plaintext; see {@link #readPlaintextFrom}. */
    private PlaintextLender plaintext = (ord, use) -> use.apply(null);

    private CollectionStorage(Path dir, String collectionId, StoreContext ctx, int bucketCount) {
        this.dir = dir;
        this.collectionId = collectionId;
        this.ctx = ctx;
        this.collectionHash = ctx.hashes().of("collection", collectionId);
        this.buckets = new ArrayList<>(bucketCount);
        for (int i = 0; i < bucketCount; i++) {
            buckets.add(new RoaringBitmap());
        }
        this.bucketSegment = new int[bucketCount];
    }

    /**
     * A segment file a read of one copy may map, from the open or the checkpoint that made it live
     * until the checkpoint that replaces it unmaps it (before deleting it: a forgotten record's
     * copy must not outlive its file in a mapping). Mapped rather than read through a channel: a
     * mapping keeps no file descriptor (a collection has up to {@code shardBuckets} files, 256 by
     * default, and a store many collections), and a read is a copy from the page cache, with no
     * system call. The file is immutable while it is live: a checkpoint writes a new file and
     * renames it into place, so the mapped one is never truncated.
     */
    private static final class SegmentFile {
        final Path file;
        private Arena arena;
        private MemorySegment mapped;
        private boolean closed;

        SegmentFile(Path file) {
            this.file = file;
        }

        /** The copy of {@code ordinal} at {@code offset}; see {@link SegmentFiles#readAt}. */
        SealedRecord readAt(long offset, int ordinal) throws IOException {
            return SegmentFiles.readAt(mapping(), file, offset, ordinal);
        }

        // The arena outlives this call on purpose: it holds the mapping until close() ends it.
        @SuppressWarnings("MustBeClosedChecker")
        private synchronized MemorySegment mapping() throws IOException {
            if (closed) {
                throw new IllegalStateException(file + " is no longer live");
            }
            if (mapped == null) {
                Arena a = Arena.ofShared();
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                    mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), a);
                } catch (IOException | RuntimeException e) {
                    a.close();
                    throw e;
                }
                arena = a;
            }
            return mapped;
        }

        /** Unmaps the file; no read may be running (the caller holds the write lock). */
        synchronized void close() {
            closed = true;
            if (arena != null) {
                arena.close();
                arena = null;
                mapped = null;
            }
        }
    }

    /**
     * Makes {@code name} bucket {@code b}'s live segment file (none when null) and closes the one
     * it replaces. Under the write lock, or during the open, before any read.
     */
    private int installSegment(int b, String name) {
        retireSegment(b);
        if (name == null) {
            return 0;
        }
        int handle = nextSegmentHandle++;
        if (handle <= 0) {
            throw new IllegalStateException(
                    dir + ": more than 2^31 segment files made in one open");
        }
        segmentFiles.put(handle, new SegmentFile(dir.resolve("segments").resolve(name)));
        bucketSegment[b] = handle;
        return handle;
    }

    private void retireSegment(int b) {
        SegmentFile old = segmentFiles.remove(bucketSegment[b]);
        if (old != null) {
            old.close();
        }
        bucketSegment[b] = 0;
    }

    /**
     * Records where the live copy of {@code ordinal} lies. Under the write lock, or during the
     * open.
     */
    private void placeCopy(int ordinal, int segment, long offset) {
        if (ordinal >= copySegment.length) {
            int cap = Math.max(ordinal + 1, copySegment.length + (copySegment.length >> 1));
            copySegment = Arrays.copyOf(copySegment, cap);
            copyOffset = Arrays.copyOf(copyOffset, cap);
        }
        copySegment[ordinal] = segment;
        copyOffset[ordinal] = offset;
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
        CollectionStorage s = new CollectionStorage(dir, collectionId, ctx, m.buckets());
        s.manifest = m;
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

    private void load(LoadSink sink) throws IOException {
        byte[] manifestAtOpen = manifestDigest();
        int orphans = removeOrphans();
        Decisions dropped = new Decisions();
        long maxSeq = 0;
        int maxOrdinal = -1;
        // Opening the records (decrypting, decoding, checking their hashes) is most of an open's
        // work and each record's is its own: every core opens segments, then the records are
        // admitted one by one in manifest order, with the same decisions as before.
        List<Map.Entry<Integer, String>> files = new ArrayList<>(manifest.segments().entrySet());
        int[] handles = new int[files.size()];
        for (int i = 0; i < files.size(); i++) {
            handles[i] = installSegment(files.get(i).getKey(), files.get(i).getValue());
        }
        loading = sink;
        sink.expectOrdinalsBelow(manifest.nextOrdinal());
        List<List<Opened>> opened;
        try {
            opened =
                    java.util.stream.IntStream.range(0, files.size())
                            .parallel()
                            .mapToObj(
                                    i -> {
                                        Map.Entry<Integer, String> e = files.get(i);
                                        try {
                                            Path f = dir.resolve("segments").resolve(e.getValue());
                                            List<Opened> out = new ArrayList<>();
                                            LastSubject subjects = new LastSubject();
                                            OpenBuffers buffers = new OpenBuffers();
                                            SegmentFiles.forEach(
                                                    f,
                                                    e.getKey(),
                                                    (header, wasSealed, length, offset) ->
                                                            out.add(
                                                                    open(
                                                                                    header,
                                                                                    wasSealed,
                                                                                    length, sink,
                                                                                    subjects,
                                                                                    buffers)
                                                                            .at(
                                                                                    handles[i],
                                                                                    offset)));
                                            return out;
                                        } catch (IOException x) {
                                            throw new UncheckedIOException(x);
                                        }
                                    })
                            .toList();
        } catch (UncheckedIOException x) {
            throw x.getCause();
        }
        for (int i = 0; i < files.size(); i++) {
            Path f = dir.resolve("segments").resolve(files.get(i).getValue());
            for (Opened o : opened.get(i)) {
                admit(o, f, dropped);
                maxSeq = Math.max(maxSeq, o.stored().seq());
                maxOrdinal = Math.max(maxOrdinal, o.stored().ordinal());
            }
        }
        opened = null;
        long[] walMax = {0, -1};
        WriteAheadLog.RecoveryReport[] report = new WriteAheadLog.RecoveryReport[1];
        Path walDir = dir.resolve("wal");
        wal =
                WriteAheadLog.open(
                        walDir,
                        ctx.durability(),
                        (gen, payload) -> {
                            if (gen < manifest.walGeneration()) {
                                return; // already folded into segments by a checkpoint that crashed
                                // before deleting it
                            }
                            ByteBuffer b = ByteBuffer.wrap(payload);
                            byte type = b.get();
                            if (type == PUT) {
                                SealedRecord r =
                                        SealedRecord.read(
                                                new DataInputStream(
                                                        new ByteArrayInputStream(
                                                                payload, 1, payload.length - 1)));
                                // The log's copies keep their vectors: they are few, and admitted
                                // as they come.
                                admit(
                                        open(r, null, new LastSubject(), new OpenBuffers()),
                                        walDir,
                                        dropped);
                                Live admitted = byOrdinal.get(r.ordinal());
                                if (admitted != null && admitted.seq() == r.seq()) {
                                    pendingSealed.put(r.ordinal(), r);
                                }
                                // Only in the log so far: the next checkpoint must write it into
                                // its bucket.
                                dirty.set(bucketIndex(r.subject()));
                                walBytes += payload.length + 8;
                                walMax[0] = Math.max(walMax[0], r.seq());
                                walMax[1] = Math.max(walMax[1], r.ordinal());
                            } else if (type == DELETE) {
                                int ord = b.getInt();
                                long deletionSeq = b.getLong();
                                walMax[0] = Math.max(walMax[0], deletionSeq);
                                walBytes += payload.length + 8;
                                // The entry deletes what held the ordinal before the deletion,
                                // never a newer
                                // record that reused the ordinal (one loaded from a segment, for
                                // instance).
                                Live gone = byOrdinal.get(ord);
                                if (gone != null && gone.seq() < deletionSeq) {
                                    byOrdinal.remove(ord);
                                    bucket(gone.subject()).remove(ord);
                                    dirty.set(bucketIndex(gone.subject()));
                                    dropped.logDeletes++;
                                    LOG.log(
                                            Level.DEBUG,
                                            "{0}: record {1} (version {2}) removed by a logged"
                                                    + " delete at version {3}",
                                            dir,
                                            gone.recordHash(),
                                            gone.seq(),
                                            deletionSeq);
                                }
                            } else {
                                throw new CorruptFileException(
                                        walDir, "write-ahead log entry of unknown type " + type);
                            }
                        },
                        report);
        wal.deleteBefore(manifest.walGeneration());
        nextSeq =
                Math.max(
                        Math.max(manifest.nextSeq(), Math.max(maxSeq, walMax[0]) + 1),
                        ctx.journal().maxSeq(collectionHash) + 1);
        nextOrdinal = Math.max(manifest.nextOrdinal(), (int) Math.max(maxOrdinal, walMax[1]) + 1);

        destroyKeysOfDroppedSubjects();
        idMap = new IdMap(dir.resolve("idmap.cmap"), Math.max(1024, byOrdinal.size() * 2L));
        boolean removedStored = dropped.deleted + dropped.superseded > 0;
        // After a clean close over these very files, with nothing replayed or dropped since, the
        // map agrees with the records already; anything else (a crash, a restored snapshot, a
        // log to replay) checks it against them.
        if (!removedStored && report[0].entries() == 0) {
            manifestUnchangedAtOpen = manifestAtOpen;
        }
        boolean trusted =
                !removedStored
                        && report[0].entries() == 0
                        && manifestAtOpen != null
                        && Arrays.equals(idMap.closedWith(), closeStamp(manifestAtOpen))
                        && idMap.size() == byOrdinal.size();
        int repairs = trusted ? 0 : idMap.reconcile(liveHashes(), removedStored);
        if (removedStored) {
            // Something deleted after these files were written (a restored snapshot, or a crash
            // between the journal entry and the checkpoint): remove it from the live files now.
            checkpoint(true);
        }
        for (Live l : byOrdinal.values()) {
            sink.accept(l.ordinal(), l.seq(), l.record());
        }
        loading = null;
        // The records are the sink's now: the storage keeps no plaintext of its own.
        for (Live l : byOrdinal.values()) {
            byOrdinal.put(l.ordinal(), l.withoutRecord());
        }
        openReport =
                new OpenReport(
                        byOrdinal.size(),
                        dropped.deleted,
                        dropped.superseded,
                        dropped.logDeletes,
                        report[0],
                        orphans,
                        idMap.rebuiltAtOpen(),
                        repairs,
                        trusted);
        if (removedStored
                || orphans > 0
                || report[0].tornBytesDropped() > 0
                || openReport.idMapRebuilt()) {
            LOG.log(Level.INFO, "{0}: opened with recovery: {1}", dir, openReport);
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
            for (IntIterator it = bucket(drop.getKey()).getIntIterator(); it.hasNext(); ) {
                Live l = byOrdinal.get(it.next());
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

    /** Why a stored copy could not be opened; it matters only if the copy is admitted. */
    private enum OpenFailure {
        NO_KEY,
        DOES_NOT_DECRYPT,
        HASHES_DIFFER,
        READ_FAILED,
        REFUSED_BY_SINK
    }

    /**
     * A stored copy opened ahead of its admission: its header (the sealed bytes dropped), and the
     * record or why there is none.
     */
    private record Opened(
            SealedRecord stored,
            VectorRecord record,
            OpenFailure failure,
            Exception cause,
            int segment,
            long offset) {
        Opened(SealedRecord stored, VectorRecord record, OpenFailure failure, Exception cause) {
            this(stored, record, failure, cause, 0, 0);
        }

        /** This copy, read at {@code offset} of the segment file {@code segment}. */
        Opened at(int segment, long offset) {
            return new Opened(stored, record, failure, cause, segment, offset);
        }
    }

    /**
     * What one segment's records are decrypted and decoded into, one after the other, instead of
     * two arrays per record (at a 1M-record open those were 3 of the 9.6 GB allocated, and the heap
     * grows, page by fresh page, to absorb them). Zeroed after each record.
     */
    private static final class OpenBuffers {
        byte[] plain = SealedRecord.NO_BYTES;

        /**
         * Sized by the first record that goes to a sink; reused while the vectors have its length.
         */
        float[] vector;
    }

    /**
     * Decrypts, decodes and checks one stored copy. Touches no state of this class, so segments are
     * opened in parallel; a failure is kept, not thrown, because a copy the tombstone journal
     * deletes or a newer version supersedes is dropped without being read (its key may be gone),
     * exactly as when each copy was opened at its admission. A copy the journal does not delete
     * goes to {@code sink} (when given), which may take its vector.
     */
    private Opened open(SealedRecord r, LoadSink sink, LastSubject subjects, OpenBuffers buffers) {
        SealedRecord header =
                new SealedRecord(
                        r.ordinal(), r.seq(), r.subject(), r.record(), SealedRecord.NO_BYTES);
        return open(header, r.sealed(), r.sealed().length, sink, subjects, buffers);
    }

    /**
     * As above, for a copy whose header is {@code r} (its own sealed bytes empty) and whose sealed
     * bytes are the first {@code sealedLength} of {@code sealed}.
     */
    private Opened open(
            SealedRecord r,
            byte[] sealed,
            int sealedLength,
            LoadSink sink,
            LastSubject subjects,
            OpenBuffers buffers) {
        try {
            DataKey key = ctx.keystore().find(r.subject());
            if (key == null) {
                return new Opened(r, null, OpenFailure.NO_KEY, null);
            }
            VectorRecord rec;
            if (buffers.plain.length < sealedLength) {
                buffers.plain = new byte[Math.max(sealedLength, 2 * buffers.plain.length)];
            }
            try {
                int length =
                        ctx.sealer()
                                .openInto(
                                        key,
                                        RecordCipher.aad(r.subject(), r.record(), r.seq()),
                                        sealed,
                                        sealedLength,
                                        buffers.plain);
                rec = RecordCodec.read(buffers.plain, length, sink == null ? null : buffers.vector);
            } catch (AEADBadTagException e) {
                return new Opened(r, null, OpenFailure.DOES_NOT_DECRYPT, e);
            } finally {
                Arrays.fill(buffers.plain, 0, sealedLength, (byte) 0);
            }
            float[] decoded = RecordAccess.vectorUnsafe(rec);
            if (sink != null && buffers.vector == null && decoded != null) {
                buffers.vector = new float[decoded.length];
            }
            try {
                if (!ctx.hashes().record(rec.tenant(), rec.id()).equals(r.record())
                        || !subjects.hash(rec.tenant(), rec.subject()).equals(r.subject())) {
                    return new Opened(r, null, OpenFailure.HASHES_DIFFER, null);
                }
                if (sink != null
                        && !ctx.journal()
                                .isDeleted(collectionHash, r.record(), r.subject(), r.seq())) {
                    try {
                        rec = sink.opened(r.ordinal(), r.seq(), rec);
                    } catch (RuntimeException e) {
                        return new Opened(r, null, OpenFailure.REFUSED_BY_SINK, e);
                    }
                }
                float[] held = RecordAccess.vectorUnsafe(rec);
                if (held != null && held == buffers.vector) {
                    // The sink left the vector in the record (or was not asked): it needs one of
                    // its own.
                    rec = RecordAccess.withVector(rec, held.clone());
                }
                return new Opened(r, rec, null, null);
            } finally {
                if (buffers.vector != null) {
                    Arrays.fill(buffers.vector, 0f);
                }
            }
        } catch (IOException e) {
            // The keystore could not unwrap the key, or the plaintext does not decode: thrown as
            // it is if this copy is admitted.
            return new Opened(r, null, OpenFailure.READ_FAILED, e);
        }
    }

    /**
     * Loads one stored copy of a record, opened by {@link #open}: keeps it, unless the journal says
     * it was deleted. Ordinals are reused, and segments load in no particular order, so an ordinal
     * may be claimed by a deleted record and by the newer record that took its ordinal over: the
     * copy with the higher sequence number holds the ordinal, and a deleted copy only ever removes
     * itself, never a different record at its ordinal.
     */
    private void admit(Opened o, Path where, Decisions dropped) throws IOException {
        SealedRecord r = o.stored();
        if (ctx.journal().isDeleted(collectionHash, r.record(), r.subject(), r.seq())) {
            dropped.deleted++;
            LOG.log(
                    Level.INFO,
                    "{0}: dropped a stored copy of record {1} (version {2}): the tombstone journal"
                            + " deletes it",
                    where,
                    r.record(),
                    r.seq());
            dirty.set(bucketIndex(r.subject()));
            Live current = byOrdinal.get(r.ordinal());
            if (current != null
                    && current.seq() == r.seq()
                    && current.recordHash().equals(r.record())) {
                byOrdinal.remove(r.ordinal());
                bucket(current.subject()).remove(r.ordinal());
            }
            return;
        }
        Live holder = byOrdinal.get(r.ordinal());
        if (holder != null && holder.seq() > r.seq()) {
            // A stale copy of a record whose ordinal a newer record took over: not live. Its
            // bucket is rewritten without it at the checkpoint the open runs.
            dropped.superseded++;
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
            dirty.set(bucketIndex(r.subject()));
            return;
        }
        if (o.failure() == OpenFailure.NO_KEY) {
            throw new CorruptFileException(
                    where,
                    "a record is sealed under a key the keystore does not hold and no deletion"
                            + " names it (was the store opened with another keystore folder?)");
        } else if (o.failure() == OpenFailure.DOES_NOT_DECRYPT) {
            throw new CorruptFileException(
                    where,
                    "a record does not decrypt: its bytes, its header or its key"
                            + " were changed (wrong master key?)",
                    o.cause());
        } else if (o.failure() == OpenFailure.HASHES_DIFFER) {
            throw new CorruptFileException(
                    where,
                    "a record decrypts but its tenant, subject or id do not match"
                            + " the hashes stored with it");
        } else if (o.failure() == OpenFailure.READ_FAILED) {
            throw (IOException) o.cause();
        } else if (o.failure() == OpenFailure.REFUSED_BY_SINK) {
            throw (RuntimeException) o.cause();
        }
        VectorRecord rec = o.record();
        Live old =
                byOrdinal.put(
                        r.ordinal(), new Live(r.ordinal(), rec, r.seq(), r.subject(), r.record()));
        if (o.segment() != 0) {
            placeCopy(
                    r.ordinal(),
                    o.segment(),
                    o.offset()); // a copy from the log is in pendingSealed
        }
        if (old != null) {
            bucket(old.subject()).remove(r.ordinal());
            dirty.set(bucketIndex(old.subject()));
        }
        bucket(r.subject()).add(r.ordinal());
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

    // ---- writes ----------------------------------------------------------------------------

    /** The store's read-only latch, which the first failed write trips. */
    public dev.nepenthe.core.internal.io.StorageFault fault() {
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
            entries.add(deleteEntry(p.ordinal(), nextSeq));
        }
        for (Placed p : batch) {
            long seq = nextSeq++;
            VectorRecord r = p.record();
            KeyedHash.Hash subject = subjectHash(r.tenant(), r.subject());
            KeyedHash.Hash record = ctx.hashes().record(r.tenant(), r.id());
            DataKey key = ctx.keystore().getOrCreate(subject);
            byte[] sealed =
                    ctx.sealer().seal(key, RecordCipher.aad(subject, record, seq), encode(r));
            SealedRecord s = new SealedRecord(p.ordinal(), seq, subject, record, sealed);
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(sealed.length + 96);
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeByte(PUT);
            s.write(out);
            entries.add(bytes.toByteArray());
            added.add(new Live(p.ordinal(), null, seq, subject, record));
            sealedCopies.add(s);
        }
        copies.writeLock().lock();
        try {
            for (SealedRecord c : sealedCopies) {
                pendingSealed.put(c.ordinal(), c);
            }
        } finally {
            copies.writeLock().unlock();
        }
        try {
            wal.sync(wal.append(entries));
        } catch (IOException | RuntimeException e) {
            // Not acknowledged: no checkpoint may fold these copies into a segment.
            copies.writeLock().lock();
            try {
                for (SealedRecord c : sealedCopies) {
                    pendingSealed.remove(c.ordinal(), c);
                }
            } finally {
                copies.writeLock().unlock();
            }
            throw e;
        }
        for (byte[] e : entries) {
            walBytes += e.length + 8;
        }
        for (Placed p : replaced) {
            forget(p.ordinal(), false); // its id is remapped to the new version by publishIds
        }
        for (Live l : added) {
            Live old = byOrdinal.put(l.ordinal(), l);
            if (old != null) {
                bucket(old.subject()).remove(l.ordinal());
            }
            bucket(l.subject()).add(l.ordinal());
            dirty.set(bucketIndex(l.subject()));
            nextOrdinal = Math.max(nextOrdinal, l.ordinal() + 1);
        }
    }

    /** Points the id map at a stored batch's new records (see {@link #put}). */
    public void publishIds(List<Placed> batch) {
        for (Placed p : batch) {
            Live l = byOrdinal.get(p.ordinal());
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
            entries.add(deleteEntry(p.ordinal(), seq));
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
        KeyedHash.Hash scope = subjectHash(tenant, subject);
        long seq = nextSeq++;
        ctx.journal().subjectDropped(collectionHash, scope, seq);
        List<byte[]> entries = new ArrayList<>();
        for (Placed p : removed) {
            entries.add(deleteEntry(p.ordinal(), seq));
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
            idMap.reconcile(liveHashes(), true);
            idMapNeedsFreshFile = false;
        }
    }

    /** Destroys the keys of every scope this collection holds; used when it is dropped. */
    public void destroyAllKeys() throws IOException {
        dropped = true;
        ctx.journal().collectionDropped(collectionHash);
        Set<KeyedHash.Hash> scopes = new HashSet<>();
        for (Live l : byOrdinal.values()) {
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
                                if (payload.length > 0 && payload[0] == PUT) {
                                    scopes.add(
                                            SealedRecord.read(
                                                            new DataInputStream(
                                                                    new ByteArrayInputStream(
                                                                            payload,
                                                                            1,
                                                                            payload.length - 1)))
                                                    .subject());
                                }
                            },
                            null)
                    .close();
        }
        for (KeyedHash.Hash s : scopes) {
            ctx.keystore().destroy(s);
        }
    }

    private void forget(int ordinal) {
        forget(ordinal, true);
    }

    private void forget(int ordinal, boolean unmapId) {
        if (unmapId) {
            // A replaced record's copy stays readable until the checkpoint: a get that found the
            // old version before the id map moves on still reads its text (see readStored).
            copies.writeLock().lock();
            try {
                pendingSealed.remove(ordinal);
            } finally {
                copies.writeLock().unlock();
            }
        }
        Live gone = byOrdinal.remove(ordinal);
        if (gone != null) {
            bucket(gone.subject()).remove(ordinal);
            dirty.set(bucketIndex(gone.subject()));
            if (unmapId) {
                idMap.remove(gone.recordHash());
            }
        }
    }

    private static byte[] deleteEntry(int ordinal, long seq) {
        return ByteBuffer.allocate(13).put(DELETE).putInt(ordinal).putLong(seq).array();
    }

    private static byte[] encode(VectorRecord r) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            RecordCodec.write(new DataOutputStream(bytes), r);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    // ---- lookups ---------------------------------------------------------------------------

    /** The ordinal of (tenant, id), or -1: a lookup in the persistent id map. */
    public int ordinalOf(String tenant, String id) {
        return idMap.get(ctx.hashes().record(tenant, id));
    }

    /** Number of live records. */
    public int size() {
        return byOrdinal.size();
    }

    /**
     * Destroys the data key of (tenant, subject) after its records were deleted, journaling the
     * drop first (so a restore drops whatever the key sealed). Does nothing when the scope never
     * had a key here.
     *
     * @return true if a key was destroyed
     */
    public boolean destroySubjectKey(String tenant, String subject) throws IOException {
        KeyedHash.Hash scope = subjectHash(tenant, subject);
        if (ctx.keystore().find(scope) == null) {
            return false;
        }
        ctx.journal().subjectDropped(collectionHash, scope, nextSeq++);
        return ctx.keystore().destroy(scope);
    }

    /** Whether the data key of (tenant, subject) in this collection still exists. */
    public boolean hasKey(String tenant, String subject) throws IOException {
        return ctx.keystore().find(subjectHash(tenant, subject)) != null;
    }

    /** The version (write sequence number) of a live record, or -1. */
    public long versionOf(int ordinal) {
        Live l = byOrdinal.get(ordinal);
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
        SealedRecord copy;
        Path where;
        copies.readLock().lock();
        try {
            copy = pendingSealed.get(ordinal);
            where = dir.resolve("wal");
            if (copy == null) {
                SegmentFile f =
                        ordinal >= 0 && ordinal < copySegment.length
                                ? segmentFiles.get(copySegment[ordinal])
                                : null;
                if (f == null) {
                    return null;
                }
                where = f.file;
                copy = f.readAt(copyOffset[ordinal], ordinal);
            }
        } finally {
            copies.readLock().unlock();
        }
        DataKey key = ctx.keystore().find(copy.subject());
        if (key == null) {
            return null;
        }
        byte[] plain = new byte[copy.sealed().length];
        try {
            int length =
                    ctx.sealer()
                            .openInto(
                                    key,
                                    RecordCipher.aad(copy.subject(), copy.record(), copy.seq()),
                                    copy.sealed(),
                                    copy.sealed().length,
                                    plain);
            return RecordCodec.read(plain, length, null);
        } catch (AEADBadTagException e) {
            throw new CorruptFileException(
                    where,
                    "the stored copy of ordinal "
                            + ordinal
                            + " (version "
                            + copy.seq()
                            + ") does not decrypt: its bytes, its header or its key were changed",
                    e);
        } finally {
            Arrays.fill(plain, (byte) 0);
        }
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
        List<byte[]> needles = new ArrayList<>(deleted.size());
        Set<Path> files = new java.util.TreeSet<>();
        for (VectorRecord r : deleted) {
            needles.add(ctx.hashes().record(r.tenant(), r.id()).bytes());
            String seg = manifest.segments().get(bucketIndex(subjectHash(r.tenant(), r.subject())));
            if (seg != null) {
                files.add(dir.resolve("segments").resolve(seg));
            }
        }
        if (needles.isEmpty()) {
            return new Residue(0, List.of(), 0);
        }
        try (DirectoryStream<Path> wals = Files.newDirectoryStream(dir.resolve("wal"))) {
            wals.forEach(files::add);
        }
        long found = 0;
        List<String> holding = new ArrayList<>();
        int scanned = 0;
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                continue;
            }
            scanned++;
            int n =
                    dev.nepenthe.core.internal.io.ForensicScan.countAny(
                            IoErrors.readAllBytes(f), needles);
            if (n > 0) {
                found += n;
                holding.add(dir.relativize(f).toString());
            }
        }
        return new Residue(found, holding, scanned);
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
        if (!Files.exists(snapshotDir.resolve(Manifest.FILE))) {
            return 0;
        }
        for (Path p :
                List.of(
                        snapshotDir,
                        snapshotDir.resolve("segments"),
                        snapshotDir.resolve(Manifest.FILE))) {
            if (Files.isSymbolicLink(p)) {
                // A rewrite through a link would write wherever it points.
                throw new IllegalStateException(
                        "snapshot copy "
                                + snapshotDir
                                + ": "
                                + p.getFileName()
                                + " is a symbolic link; expected the folder and files a snapshot"
                                + " writes");
            }
        }
        Manifest m = Manifest.read(snapshotDir);
        Map<Integer, String> segments = new HashMap<>(m.segments());
        List<String> superseded = new ArrayList<>();
        long nextSegment = m.nextSegmentId();
        int removed = 0;
        for (Map.Entry<Integer, String> e : m.segments().entrySet()) {
            Path f = snapshotDir.resolve("segments").resolve(e.getValue());
            List<SealedRecord> records = SegmentFiles.read(f, e.getKey());
            List<SealedRecord> kept =
                    records.stream().filter(r -> !recordHashes.contains(r.record())).toList();
            if (kept.size() == records.size()) {
                continue;
            }
            removed += records.size() - kept.size();
            superseded.add(e.getValue());
            if (kept.isEmpty()) {
                segments.remove(e.getKey());
                continue;
            }
            String name = SegmentFiles.name(e.getKey(), nextSegment++);
            SegmentFiles.write(snapshotDir.resolve("segments").resolve(name), e.getKey(), kept);
            segments.put(e.getKey(), name);
        }
        if (removed == 0) {
            return 0;
        }
        ChecksummedFiles.fsyncDirectory(snapshotDir.resolve("segments"));
        new Manifest(
                        m.buckets(),
                        m.nextSeq(),
                        m.nextOrdinal(),
                        m.walGeneration(),
                        nextSegment,
                        segments)
                .write(snapshotDir);
        for (String old : superseded) {
            Files.deleteIfExists(snapshotDir.resolve("segments").resolve(old));
        }
        ChecksummedFiles.fsyncDirectory(snapshotDir.resolve("segments"));
        return removed;
    }

    /** Occurrences of the given keyed hashes in any file of a snapshot copy of a collection. */
    public static long scanSnapshotCopy(Path snapshotDir, List<byte[]> recordHashes)
            throws IOException {
        long found = 0;
        if (!Files.isDirectory(snapshotDir) || recordHashes.isEmpty()) {
            return 0;
        }
        try (java.util.stream.Stream<Path> files = Files.walk(snapshotDir)) {
            // Regular files only, never through a link: the scan reads the copy, not what a link
            // names.
            for (Path f :
                    files.filter(
                                    f ->
                                            Files.isRegularFile(
                                                    f, java.nio.file.LinkOption.NOFOLLOW_LINKS))
                            .toList()) {
                found +=
                        dev.nepenthe.core.internal.io.ForensicScan.countAny(
                                IoErrors.readAllBytes(f), recordHashes);
            }
        }
        return found;
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
            ctx.journal().subjectReadmitted(collectionHash, subjectHash(tenant, subject), floor);
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
     * Folds the log into segments: rotate the log, rewrite each dirty bucket's segment (from the
     * live records, sealed afresh), commit a manifest naming the new files, then delete the
     * superseded segments and log generations.
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
        // Per rewritten bucket: its new file (null when emptied), its members and their copies'
        // offsets.
        record Rewritten(int bucket, String name, int[] ordinals, long[] offsets) {}
        List<Rewritten> rewritten = new ArrayList<>();
        for (int b = dirty.nextSetBit(0); b >= 0; b = dirty.nextSetBit(b + 1)) {
            String old = segments.remove(b);
            if (old != null) {
                superseded.add(old);
            }
            RoaringBitmap members = buckets.get(b);
            if (members.isEmpty()) {
                rewritten.add(new Rewritten(b, null, new int[0], new long[0]));
                continue;
            }
            // Sealed bytes come from the log write (new records) or the bucket's previous segment
            // (unchanged records); nothing is encrypted twice.
            Map<Integer, SealedRecord> previous = new HashMap<>();
            if (old != null) {
                for (SealedRecord r : SegmentFiles.read(dir.resolve("segments").resolve(old), b)) {
                    previous.put(r.ordinal(), r);
                }
            }
            List<SealedRecord> sealed = new ArrayList<>(members.getCardinality());
            int[] ordinals = members.toArray();
            long[] offsets = new long[ordinals.length];
            long offset = SegmentFiles.FIRST_COPY;
            for (int i = 0; i < ordinals.length; i++) {
                Live l = byOrdinal.get(ordinals[i]);
                SealedRecord r = pendingSealed.get(l.ordinal());
                if (r == null || r.seq() != l.seq()) {
                    r = previous.get(l.ordinal());
                }
                r = r != null && r.seq() == l.seq() ? r : reseal(l);
                sealed.add(r);
                offsets[i] = offset;
                offset += SegmentFiles.copyLength(r.sealed().length);
            }
            String name = SegmentFiles.name(b, nextSegment++);
            SegmentFiles.write(dir.resolve("segments").resolve(name), b, sealed);
            segments.put(b, name);
            rewritten.add(new Rewritten(b, name, ordinals, offsets));
        }
        ChecksummedFiles.fsyncDirectory(dir.resolve("segments"));
        manifest =
                new Manifest(manifest.buckets(), nextSeq, nextOrdinal, gen, nextSegment, segments);
        manifest.write(dir);
        // Reads move to the new files before the old ones go; the log's copies are in them now.
        copies.writeLock().lock();
        try {
            for (Rewritten r : rewritten) {
                int handle = installSegment(r.bucket(), r.name());
                for (int i = 0; i < r.ordinals().length; i++) {
                    placeCopy(r.ordinals()[i], handle, r.offsets()[i]);
                }
            }
            pendingSealed.clear();
        } finally {
            copies.writeLock().unlock();
        }
        for (String s : superseded) {
            Files.deleteIfExists(dir.resolve("segments").resolve(s));
            CrashPoints.reached("checkpoint.deleted-segment");
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
        this.plaintext = lender;
    }

    private SealedRecord reseal(Live l) {
        Function<VectorRecord, byte[]> seal =
                r -> {
                    if (r == null
                            || !ctx.hashes().record(r.tenant(), r.id()).equals(l.recordHash())) {
                        throw new IllegalStateException(
                                dir
                                        + ": the live record at ordinal "
                                        + l.ordinal()
                                        + " has no sealed copy and its plaintext is not at hand;"
                                        + " the checkpoint stops before writing a segment without"
                                        + " it");
                    }
                    byte[] plain = encode(r);
                    try {
                        DataKey key = ctx.keystore().find(l.subject());
                        if (key == null) {
                            throw new IllegalStateException("live record's scope has no key");
                        }
                        return ctx.sealer()
                                .seal(
                                        key,
                                        RecordCipher.aad(l.subject(), l.recordHash(), l.seq()),
                                        plain);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    } finally {
                        Arrays.fill(plain, (byte) 0);
                    }
                };
        byte[] sealed;
        if (l.record() == null) {
            sealed = plaintext.lend(l.ordinal(), seal);
        } else if (RecordAccess.vectorUnsafe(l.record()) == null && loading != null) {
            // At open, the sink took this record's vector as its segment was decoded.
            VectorRecord whole = loading.rejoin(l.ordinal(), l.seq(), l.record());
            try {
                sealed = seal.apply(whole);
            } finally {
                Arrays.fill(RecordAccess.vectorUnsafe(whole), 0f);
            }
        } else {
            sealed = seal.apply(l.record());
        }
        return new SealedRecord(l.ordinal(), l.seq(), l.subject(), l.recordHash(), sealed);
    }

    /**
     * Copies a consistent image of this collection's data files into {@code target}: the manifest
     * and the segments it names. The caller checkpoints first and lets no write in until the copy
     * is done, so the log holds nothing the segments lack. The keystore is never copied.
     */
    public void snapshotTo(Path target) throws IOException {
        if (walBytes > 0 || !dirty.isEmpty()) {
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

    /**
     * The subject hash last computed while one segment is opened: a segment keeps each subject's
     * records together, and each hash is an HMAC. One per segment and thread.
     */
    private final class LastSubject {
        private String tenant;
        private String subject;
        private KeyedHash.Hash hash;

        KeyedHash.Hash hash(String t, String s) {
            if (hash == null || !t.equals(tenant) || !java.util.Objects.equals(s, subject)) {
                hash = subjectHash(t, s);
                tenant = t;
                subject = s;
            }
            return hash;
        }
    }

    private KeyedHash.Hash subjectHash(String tenant, String subject) {
        return ctx.hashes().of("subject", collectionId, tenant, subject == null ? "" : subject);
    }

    private Map<KeyedHash.Hash, Integer> liveHashes() {
        Map<KeyedHash.Hash, Integer> live = new HashMap<>(byOrdinal.size() * 2);
        for (Live l : byOrdinal.values()) {
            live.put(l.recordHash(), l.ordinal());
        }
        return live;
    }

    private int bucketIndex(KeyedHash.Hash subject) {
        byte[] b = subject.bytes();
        int h =
                ((b[0] & 0xFF) << 24)
                        | ((b[1] & 0xFF) << 16)
                        | ((b[2] & 0xFF) << 8)
                        | (b[3] & 0xFF);
        return Math.floorMod(h, buckets.size());
    }

    private RoaringBitmap bucket(KeyedHash.Hash subject) {
        return buckets.get(bucketIndex(subject));
    }

    @Override
    public void close() throws IOException {
        byte[] stamp = new byte[0];
        try {
            if (!dropped && (walBytes > 0 || !dirty.isEmpty() || idMapNeedsFreshFile)) {
                purgeDeleted();
            }
            if (!dropped) {
                byte[] manifestNow = manifestDigest();
                stamp = manifestNow == null ? stamp : closeStamp(manifestNow);
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

    /**
     * What a clean close stamps the id map with: the digest of the manifest (unique per write: it
     * carries a fresh file id) and the live count. The next open trusts the map only if its own
     * manifest and count give the same stamp.
     */
    private byte[] closeStamp(byte[] manifestDigest) {
        return ByteBuffer.allocate(manifestDigest.length + 4)
                .put(manifestDigest)
                .putInt(byOrdinal.size())
                .array();
    }

    /** SHA-256 of the manifest file's bytes, or null when there is none. */
    private byte[] manifestDigest() throws IOException {
        Path f = dir.resolve(Manifest.FILE);
        if (!Files.exists(f)) {
            return null;
        }
        try {
            return java.security.MessageDigest.getInstance("SHA-256")
                    .digest(IoErrors.readAllBytes(f));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
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
        copies.writeLock().lock();
        try {
            for (int b = 0; b < bucketSegment.length; b++) {
                retireSegment(b);
            }
        } finally {
            copies.writeLock().unlock();
        }
        try {
            if (wal != null) {
                wal.close();
            }
        } catch (IOException e) {
            LOG.log(
                    Level.WARNING,
                    "closing the write-ahead log of {0} failed: {1}",
                    dir,
                    e.getMessage());
        }
        if (idMap != null) {
            try {
                idMap.close(idMapStamp);
            } catch (IOException e) {
                LOG.log(
                        Level.WARNING,
                        "closing the id map of {0} failed: {1}",
                        dir,
                        e.getMessage());
            }
        }
    }
}
