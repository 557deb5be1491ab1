package dev.nepenthe.core;

import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.embed.Embedder;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.Readmission;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.IndexGenerations;
import dev.nepenthe.core.internal.engine.JvmFlags;
import dev.nepenthe.core.internal.engine.NoPhoneHome;
import dev.nepenthe.core.internal.engine.StoreFolders;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.core.internal.forget.ForgetProtocol;
import dev.nepenthe.core.internal.index.VectorIndexes;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.FileCopies;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.storage.StoreContext;
import dev.nepenthe.core.internal.storage.TombstoneJournal;
import dev.nepenthe.core.internal.text.TextIndex;
import dev.nepenthe.core.internal.text.TextIndexOpener;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * An embedded Nepenthe store on a local folder.
 *
 * <pre>{@code
 * try (Nepenthe store = Nepenthe.open(Path.of("data"))) {
 *     VectorCollection notes = store.createCollection(CollectionSpec.of("notes", 384, Metric.COSINE));
 *     notes.upsert(VectorRecord.builder("n1").subject("alice").vector(v).text("...").build());
 *     List<SearchHit> hits = notes.search(SearchRequest.of(q, 5));
 *     ForgetOperation op = store.forget(ForgetRequest.of(ForgetScope.subject("alice"), "req-1", "gdpr-art17"));
 *     store.awaitOperation(op.id(), Duration.ofMinutes(1)); // SEALED, with a signed receipt
 * }
 * }</pre>
 *
 * <p>Data folder: {@code store.lock} (held while open, so two processes cannot share a folder) and
 * {@code collections/<name>/} with {@code collection.meta}, {@code MANIFEST}, {@code wal/}
 * (write-ahead log), {@code segments/} (one immutable file per shard bucket) and {@code idmap.cmap}
 * (Chronicle Map from keyed id hashes to ordinals). Every byte of record content in them is
 * encrypted under its subject's key.
 *
 * <p>Keystore folder (apart from the data, never in a snapshot; default {@code <data
 * folder>.keys}): {@code keys.db} (wrapped per-subject keys), {@code master.key} (only when
 * generated for the embedded default), {@code tombstones/} (the journal of deletions every open
 * replays), {@code operations/} (forget operations and legal holds), {@code evidence/} (the signed
 * evidence ledger and the signing key) and {@code snapshots.registry} (the snapshots a forget must
 * purge).
 *
 * <p>Safe for concurrent use. Collection management and snapshots ({@link #createCollection},
 * {@link #dropCollection}, {@link #collections()}, {@link #snapshot}, {@link #close()}) take turns
 * on this store's monitor; looking a collection up ({@link #collection}) never waits for them.
 * Forgets, holds and overrides take turns on the forget engine's monitor for their bookkeeping, and
 * one background worker carries operations through cleanup, verification and sealing.
 */
public final class Nepenthe implements AutoCloseable {

    static {
        // Before Chronicle Map (the id map) can load: it reports usage unless told not to.
        NoPhoneHome.apply();
    }

    /**
     * The seed handed to every index factory for its random choices (see {@link
     * IndexConfig#seed()}).
     */
    private static final long INDEX_SEED = 42L;

    private static final System.Logger LOG = System.getLogger(Nepenthe.class.getName());

    private final Path root;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final StoreOptions options;

    /** Sorted and concurrent: {@link #collection} reads it without this store's monitor. */
    private final Map<String, VectorCollection> collections =
            new java.util.concurrent.ConcurrentSkipListMap<>();

    /**
     * A copy of the collections for the forget worker, which must not wait on this store's monitor.
     */
    private volatile List<CollectionEngine> collectionList = List.of();

    private ForgetProtocol protocol;
    private SigningKey signingKey;
    private Keystore keystore;
    private TombstoneJournal journal;
    private StoreContext context;

    /** Tripped by the first failed write: from then on the store only serves reads. */
    private final StorageFault fault = new StorageFault();

    private volatile boolean closed;

    private Nepenthe(Path root, FileChannel lockChannel, FileLock lock, StoreOptions options) {
        this.root = root;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.options = options;
    }

    /**
     * Opens the store in {@code folder} with {@link StoreOptions#defaults()}; see {@link
     * #open(Path, StoreOptions)}.
     *
     * @param folder the data folder, created if needed
     * @return the open store
     * @throws IOException if the folder is in use by another process, a file is corrupt or a read
     *     or write fails
     * @throws IllegalStateException if the JVM lacks flags the store needs
     */
    public static Nepenthe open(Path folder) throws IOException {
        return open(folder, StoreOptions.defaults());
    }

    /**
     * Opens (creating if needed) the store in {@code folder} and loads its collections. Before it
     * returns: the tombstone journal is replayed (whatever was deleted or forgotten since the files
     * were written is dropped and rewritten out), every collection's records are read and
     * decrypted, its vector index is loaded from its newest readable generation file (and brought
     * up to the records) or, without one, built from the records, unfinished forget operations are
     * marked again, sealed ones are re-checked against what the store holds (reconciliation), and
     * the forget worker starts. Every recovery decision is logged and reported (see {@link
     * VectorCollection#openReport()}).
     *
     * @param folder the data folder, created if needed
     * @param options where the keys live and how the store behaves
     * @return the open store
     * @throws IOException if the folder is in use by another process, a file is corrupt (the
     *     message names the file), no master key is found and none may be generated, or a read or
     *     write fails
     * @throws IllegalStateException if the JVM lacks flags the store needs (the message lists every
     *     missing one; see the README), or the options name a ledger witness that the evidence
     *     ledger no longer holds
     * @throws IllegalArgumentException if the keystore folder is inside the data folder, or the
     *     master key is malformed
     */
    public static Nepenthe open(Path folder, StoreOptions options) throws IOException {
        JvmFlags.check();
        dev.nepenthe.core.internal.storage.CollectionStorage.warmUpInBackground();
        Path keys = options.keystoreFor(folder);
        Path data = folder.toAbsolutePath().normalize();
        if (keys.startsWith(data)) {
            throw new IllegalArgumentException(
                    "keystore folder "
                            + keys
                            + " is inside the data folder "
                            + data
                            + ": expected it apart, or snapshots and backups of the data would"
                            + " carry the keys");
        }
        Files.createDirectories(folder.resolve("collections"));
        FileChannel ch =
                FileChannel.open(
                        folder.resolve("store.lock"),
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        if (lock == null) {
            ch.close();
            throw new IOException(
                    "store folder "
                            + folder
                            + " is in use by another process (store.lock is held)");
        }
        Nepenthe store = new Nepenthe(folder, ch, lock, options);
        try {
            MasterKey master =
                    MasterKey.resolve(
                            options.masterKeyFile() != null
                                    ? options.masterKeyFile()
                                    : keys.resolve("master.key"),
                            options.generateMasterKey());
            store.keystore = Keystore.open(keys, master);
            store.journal = TombstoneJournal.open(keys.resolve("tombstones"));
            store.context =
                    new StoreContext(
                            store.keystore,
                            new KeyedHash(master),
                            store.journal,
                            dev.nepenthe.core.internal.storage.RecordSealer.AES_GCM,
                            options.durability(),
                            options.checkpointBytes(),
                            options.shardBuckets(),
                            store.fault);
            store.loadCollections();
            store.signingKey =
                    SigningKey.loadOrCreate(
                            keys.resolve("evidence").resolve("signing.key"),
                            master.derive("evidence-signing-key"));
            store.protocol =
                    new ForgetProtocol(
                            keys,
                            store.context.hashes(),
                            store.keystore,
                            store.signingKey,
                            () -> store.collectionList,
                            options.forgetWorkerNice(),
                            options.probePolicy(),
                            store.fault);
            if (options.ledgerWitness() != null) {
                LedgerAudit.Check c =
                        store.protocol.ledger().audit().checkHead(options.ledgerWitness());
                if (!c.ok()) {
                    throw new IllegalStateException(
                            "keystore folder "
                                    + keys
                                    + ": its evidence ledger does not hold the"
                                    + " witnessed head "
                                    + options.ledgerWitness()
                                    + " ("
                                    + c.problem()
                                    + "). The keystore is older than the witness: forgets recorded"
                                    + " after it are missing, and records they erased could be"
                                    + " served again. Refusing to open; restore a keystore copy"
                                    + " that holds the witnessed head, or open without the witness"
                                    + " to accept that knowingly");
                }
            }
            store.protocol.start();
        } catch (IOException | RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    private void loadCollections() throws IOException {
        try (DirectoryStream<Path> dirs =
                Files.newDirectoryStream(root.resolve("collections"), Files::isDirectory)) {
            for (Path dir : dirs) {
                Path metaFile = dir.resolve("collection.meta");
                if (!Files.exists(metaFile)) {
                    if (StoreFolders.isUnfinishedCreation(dir)) {
                        // A crash inside createCollection before its meta file (the commit point)
                        // was renamed into place: the collection never existed.
                        LOG.log(
                                System.Logger.Level.WARNING,
                                "{0}: removing a collection folder whose creation did not finish"
                                        + " (no collection.meta; a crash during createCollection)",
                                dir);
                        StoreFolders.deleteTree(dir);
                        continue;
                    }
                    throw new dev.nepenthe.core.CorruptFileException(
                            metaFile,
                            "collection folder "
                                    + dir.getFileName()
                                    + " holds data but its collection.meta is missing (deleted or"
                                    + " lost?)");
                }
                StoreFolders.Meta meta = StoreFolders.readMeta(metaFile);
                if (journal.isDropped(context.hashes().of("collection", meta.id()))) {
                    // Dropped after the files were written (a restored snapshot, or a crash
                    // mid-drop): finish the drop before anything is served.
                    CollectionStorage.purgeDropped(dir, meta.id(), context);
                    TextIndex.destroyFolder(
                            dir.resolve("text"), keystore, context.hashes(), meta.id());
                    IndexGenerations.destroyFolder(
                            dir.resolve("index"), keystore, context.hashes(), meta.id());
                    StoreFolders.deleteTree(dir);
                    continue;
                }
                collections.put(meta.spec().name(), openCollection(dir, meta.spec(), meta.id()));
            }
        }
        collectionList = engines();
    }

    private List<CollectionEngine> engines() {
        return collections.values().stream().map(VectorCollection::engine).toList();
    }

    /**
     * Creates a collection: checks the index kind and parameters by building an empty index, then
     * writes the collection's folder and meta file (fsynced; the meta file's rename is the commit
     * point). Takes this store's monitor.
     *
     * @param spec the collection's name, dimension, metric, index and provenance policy
     * @return the new, empty collection
     * @throws IllegalArgumentException if the name is taken, the index kind is not on the class
     *     path or the index parameters are invalid
     * @throws java.io.UncheckedIOException if writing the folder or the meta file failed
     * @throws IllegalStateException if the store is closed
     */
    public synchronized VectorCollection createCollection(CollectionSpec spec) {
        ensureOpen();
        fault.ensureWritable();
        if (collections.containsKey(spec.name())) {
            throw new IllegalArgumentException("collection '" + spec.name() + "' already exists");
        }
        // Validate the index parameters before anything touches the disk.
        VectorIndexes.factory(spec.index().kind()).create(indexConfig(spec)).close();
        if (spec.embedder() != null) {
            Embedder e = options.embedders().get(spec.embedder());
            if (e == null) {
                throw new IllegalArgumentException(
                        "collection '"
                                + spec.name()
                                + "': embedder '"
                                + spec.embedder()
                                + "' is not one this store was opened with"
                                + " (StoreOptions.withEmbedder); it has "
                                + options.embedders().keySet());
            }
            if (e.dimension() != spec.dimension()) {
                throw new IllegalArgumentException(
                        "collection '"
                                + spec.name()
                                + "': dimension "
                                + spec.dimension()
                                + " does not match embedder '"
                                + spec.embedder()
                                + "', which gives "
                                + e.dimension());
            }
        }
        Path dir = root.resolve("collections").resolve(spec.name());
        String id = java.util.HexFormat.of().formatHex(ChecksummedFiles.newFileId());
        try {
            Files.createDirectories(dir);
            StoreFolders.writeMeta(dir.resolve("collection.meta"), spec, id);
            VectorCollection c = openCollection(dir, spec, id);
            protocol.adopt(c.engine());
            collections.put(spec.name(), c);
            collectionList = engines();
            return c;
        } catch (IOException e) {
            throw fault.trip(
                    new UncheckedIOException(
                            "creating collection '" + spec.name() + "' failed", e));
        }
    }

    /**
     * The collection with this name. Takes no lock: a concurrent map lookup.
     *
     * @param name the collection's name
     * @return the collection
     * @throws UnknownCollectionException listing the collections that exist
     * @throws IllegalStateException if the store is closed
     */
    public VectorCollection collection(String name) {
        // No monitor: a search that looks its collection up must not wait for a snapshot copy
        // or a collection being created.
        ensureOpen();
        VectorCollection c = collections.get(name);
        if (c == null) {
            throw new UnknownCollectionException(name, collections.keySet());
        }
        return c;
    }

    /**
     * Tenants with at least one live record in any collection, as each collection last published
     * them. No lock; costs a union of every collection's tenant set.
     *
     * @return the tenants, sorted, in an immutable list
     * @throws IllegalStateException if the store is closed
     */
    public List<String> tenants() {
        ensureOpen();
        java.util.TreeSet<String> out = new java.util.TreeSet<>();
        collections.values().forEach(c -> out.addAll(c.tenants()));
        return List.copyOf(out);
    }

    /**
     * Specs of every collection. Takes this store's monitor, so it waits for a collection being
     * created or dropped and for a snapshot in progress.
     *
     * @return the specs in name order, in a list of the caller's own
     * @throws IllegalStateException if the store is closed
     */
    public synchronized List<CollectionSpec> collections() {
        ensureOpen();
        List<CollectionSpec> out = new ArrayList<>();
        collections.values().forEach(c -> out.add(c.spec()));
        return out;
    }

    /**
     * Drops a collection: its keys are destroyed (so copies in snapshots become unreadable), the
     * drop is journaled (so a restore cannot bring it back) and its files are deleted. The journal
     * entry comes first, then the keys, then the files, so a crash midway is finished at the next
     * open. Takes this store's monitor and waits for a write in flight in the collection; a {@link
     * VectorCollection} still held for it is closed from then on.
     *
     * @param name the collection's name
     * @return false if no such collection existed
     * @throws java.io.UncheckedIOException if journaling, destroying the keys or deleting the files
     *     failed (the collection is already gone from this store)
     * @throws IllegalStateException if the store is closed
     */
    public synchronized boolean dropCollection(String name) {
        ensureOpen();
        fault.ensureWritable();
        VectorCollection c = collections.remove(name);
        if (c == null) {
            return false;
        }
        collectionList = engines();
        try {
            c.engine().destroyAllKeys();
            c.engine().close();
            StoreFolders.deleteTree(root.resolve("collections").resolve(name));
            ChecksummedFiles.fsyncDirectory(root.resolve("collections"));
            return true;
        } catch (IOException e) {
            throw fault.trip(
                    new UncheckedIOException("dropping collection '" + name + "' failed", e));
        }
    }

    /**
     * Writes a consistent copy of every collection's data files to {@code target} (which must not
     * exist yet) while the store keeps serving searches; writers wait per collection. The keystore
     * is not copied: a snapshot is readable only with this store's keystore, and a subject
     * forgotten later stays forgotten in it. Each collection is checkpointed and its manifest and
     * segment files copied while its writes wait; the snapshot is then registered, so later forgets
     * purge their records from it as well. Takes this store's monitor throughout.
     *
     * @param target the snapshot folder to create
     * @throws IOException if a checkpoint or a copy fails (the target may then hold a partial copy)
     * @throws IllegalArgumentException if {@code target} already exists
     * @throws IllegalStateException if the store is closed
     */
    public synchronized void snapshot(Path target) throws IOException {
        ensureOpen();
        fault.ensureWritable();
        // NOFOLLOW: a dangling link at the target exists too (creating through it would write where
        // it points).
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
            throw new IllegalArgumentException(
                    "snapshot target " + target + " already exists; expected a new folder");
        }
        for (Map.Entry<String, VectorCollection> e : collections.entrySet()) {
            Path dst = target.resolve("collections").resolve(e.getKey());
            Files.createDirectories(dst);
            FileCopies.copyRegularFile(
                    root.resolve("collections").resolve(e.getKey()).resolve("collection.meta"),
                    dst.resolve("collection.meta"));
            e.getValue().engine().snapshotTo(dst);
            try {
                protocol.registerSnapshot(target, e.getValue().engine());
            } catch (IOException | RuntimeException x) {
                // Unregistered, a later forget would not purge this snapshot: nothing more is
                // written.
                fault.trip(x);
                throw x;
            }
        }
        Files.createDirectories(target.resolve("collections"));
    }

    /**
     * Copies a snapshot into {@code folder}, which must be absent or empty. Open the store
     * afterwards as usual: opening replays the tombstone journal, so whatever was deleted or
     * forgotten after the snapshot was taken is dropped (and its files rewritten) before anything
     * is served. A plain file copy: no store needs to be open, and nothing is fsynced.
     *
     * @param snapshot a folder written by {@link #snapshot}
     * @param folder the data folder to restore into
     * @throws IOException if a copy fails
     * @throws IllegalArgumentException if the source is not a snapshot or the target not empty
     */
    public static void restore(Path snapshot, Path folder) throws IOException {
        StoreFolders.copySnapshot(snapshot, folder);
    }

    /**
     * Copies a snapshot into {@code folder} (absent or empty) and opens it with {@code options}, so
     * it opens against the keystore that took the snapshot: the tombstone journal drops what was
     * deleted or forgotten since, and reconciliation re-checks every sealed forget, before the
     * returned store serves anything.
     *
     * @param snapshot a folder written by {@link #snapshot}
     * @param folder the data folder to restore into
     * @param options the options to open with; their keystore must be the one that took the
     *     snapshot
     * @return the open store
     * @throws IOException if a copy fails, or opening fails as {@link #open(Path, StoreOptions)}
     *     can
     * @throws IllegalArgumentException if the source is not a snapshot or the target not empty
     * @throws IllegalStateException as {@link #open(Path, StoreOptions)} can
     */
    public static Nepenthe restore(Path snapshot, Path folder, StoreOptions options)
            throws IOException {
        restore(snapshot, folder);
        return open(folder, options);
    }

    // ---- the forget protocol -----------------------------------------------------------------

    /**
     * Starts forgetting: marks the scope in every collection (from the moment this returns no
     * search, get or list returns a record in scope, and writes in scope are refused), records the
     * operation durably and returns it, BLOCKED. Cleanup, verification and sealing continue on the
     * store's forget worker; follow them with {@link #operation} or {@link #awaitOperation}. The
     * same idempotency key returns the same operation.
     *
     * <p>Costs, on the caller's thread: in every collection, the writer mutex (so it waits for a
     * write in flight, fsync included) and a pass over the scope's candidates (the subject's
     * records for a subject scope, every record of the tenant otherwise; a metadata scope passes
     * over the tenant's records once more to resolve its filter); then each registered surface's
     * {@link ErasureSurface#block}, and one fsynced write of the operation log. Searches never wait
     * for it.
     *
     * @param request the tenant, scope, idempotency key, reason code and options
     * @return the operation as it stands: BLOCKED, or, for a repeated idempotency key, the
     *     operation that key started, in whatever state it has reached
     * @throws IllegalArgumentException if the idempotency key was used for a different request, the
     *     request's probe threshold is outside the store's {@link
     *     dev.nepenthe.core.forget.ProbePolicy}, or a declared identifier has no letter or digit
     * @throws IllegalStateException if the store is closed, or the evidence ledger is damaged (see
     *     {@link #health()})
     * @throws java.io.UncheckedIOException if recording the operation failed; if it was marked, the
     *     next open resumes it
     */
    public ForgetOperation forget(ForgetRequest request) {
        ensureOpen();
        fault.ensureWritable();
        try {
            return protocol.forget(request);
        } catch (IOException e) {
            fault.trip(e);
            throw new UncheckedIOException(
                    "forget: recording the operation failed; if it was marked, the next open"
                            + " resumes it",
                    e);
        }
    }

    /**
     * A forget operation as it stands now (sealed ones included). Held in memory: no I/O.
     *
     * @param id the operation's id ({@code fop-...})
     * @return the operation, or empty when no operation has this id
     */
    public Optional<ForgetOperation> operation(String id) {
        return protocol.operation(id);
    }

    /**
     * Operations that pass {@code filter}, oldest first. Held in memory: no I/O, but a pass over
     * every operation the store has recorded, sealed ones included, under the forget engine's
     * monitor (keep the filter quick).
     *
     * @param filter which operations to return, for example by state
     * @return the matching operations
     */
    public List<ForgetOperation> operations(Predicate<ForgetOperation> filter) {
        return protocol.operations(filter);
    }

    /**
     * Waits until an operation is SEALED, COMPLETED_WITH_EXCEPTION or NEEDS_REVIEW (or stopped on a
     * failure its note names).
     *
     * @param id the operation's id
     * @param timeout how long to wait at most
     * @return the operation once settled, or stopped on a failure
     * @throws IllegalStateException if it has not settled within {@code timeout}
     * @throws IllegalArgumentException if no operation has this id
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public ForgetOperation awaitOperation(String id, Duration timeout) throws InterruptedException {
        return protocol.await(id, timeout);
    }

    /**
     * Runs verification again for an operation in NEEDS_REVIEW, after more was forgotten. It moves
     * the operation to VERIFYING and hands it to the forget worker; follow it with {@link
     * #awaitOperation}.
     *
     * @param operationId the operation's id
     * @return the operation as it stands when the worker has it (VERIFYING, or later)
     * @throws IllegalArgumentException if no operation has this id
     * @throws IllegalStateException if the operation is not in NEEDS_REVIEW, or the evidence ledger
     *     is damaged
     */
    public ForgetOperation reverify(String operationId) {
        return protocol.reverify(operationId);
    }

    /**
     * Seals an operation in NEEDS_REVIEW whose suspects the operator judged not to be residue; the
     * override and its reason code go into the evidence and the receipt. Seals on the caller's
     * thread: destroys the subject's keys, appends the evidence (fsynced) and signs the receipt.
     *
     * @param operationId the operation's id
     * @param reasonCode why, as a code (see {@link ForgetRequest#checkReasonCode})
     * @return the sealed operation, with its receipt
     * @throws IllegalArgumentException if no operation has this id or the reason code is not a code
     * @throws IllegalStateException if the operation is not in NEEDS_REVIEW, derived records await
     *     regeneration, a surface failed its checks (an override covers suspects only), or the
     *     evidence ledger is damaged
     * @throws java.io.UncheckedIOException if sealing failed; the operation stays in review
     */
    public ForgetOperation override(String operationId, String reasonCode) {
        fault.ensureWritable();
        try {
            return protocol.override(operationId, reasonCode);
        } catch (IOException e) {
            throw fault.trip(
                    new UncheckedIOException(
                            "override of " + operationId + " failed; the operation stays in review",
                            e));
        }
    }

    /**
     * Places a legal hold on a subject or a source (every version) in a tenant. Holds are checked
     * when an operation leaves BLOCKED: a forget marked later whose records fall under the hold
     * stops in COMPLETED_WITH_EXCEPTION, and so does one still BLOCKED; one already in cleanup goes
     * on. Saved in the operation log and recorded in the evidence ledger (both fsynced).
     *
     * @param tenant the tenant
     * @param scope a {@link ForgetScope#subject} or {@link ForgetScope#source} scope; a source's
     *     version is ignored
     * @param reasonCode why, as a code
     * @return the hold, with its id
     * @throws IllegalArgumentException if the scope is neither a subject nor a source, or the
     *     reason code is not a code
     * @throws IllegalStateException if the store is closed or the evidence ledger is damaged
     * @throws java.io.UncheckedIOException if saving the hold failed
     */
    public LegalHold placeHold(String tenant, ForgetScope scope, String reasonCode) {
        fault.ensureWritable();
        try {
            return protocol.placeHold(tenant, scope, reasonCode);
        } catch (IOException e) {
            throw fault.trip(new UncheckedIOException("placing the legal hold failed", e));
        }
    }

    /**
     * Lifts a legal hold; forget operations it stopped go back to BLOCKED and the worker resumes
     * them (another active hold may stop them again). Recorded in the operation log and the
     * evidence ledger.
     *
     * @param holdId the hold's id
     * @throws IllegalArgumentException if no active hold has this id (none, or lifted already)
     * @throws IllegalStateException if the evidence ledger is damaged
     * @throws java.io.UncheckedIOException if recording the lift failed
     */
    public void liftHold(String holdId) {
        fault.ensureWritable();
        try {
            protocol.liftHold(holdId);
        } catch (IOException e) {
            throw fault.trip(
                    new UncheckedIOException("lifting legal hold " + holdId + " failed", e));
        }
    }

    /**
     * Every legal hold the store has recorded, active or lifted. Held in memory: no I/O.
     *
     * @return the holds
     */
    public List<LegalHold> holds() {
        return protocol.holds();
    }

    /**
     * Re-admits a subject, or record ids, that sealed forgets fenced: from when this returns,
     * writes in the scope that the forgets refused (with a {@link
     * dev.nepenthe.core.forget.ForgottenScopeException}) are accepted, and stored as new records.
     * Nothing from before the forgets comes back: every collection takes a version floor
     * (journaled), and reconciliation at every open still removes a record the lifted fences name
     * whose version is below it (a restored snapshot, a lost journal). The forgets' receipts and
     * ledger entries are untouched and still verify; the re-admission is a ledger entry of its own
     * (keyed hashes of tenant and scope, the reason code, the time, the operations whose fences it
     * lifted).
     *
     * <p>A subject re-admission lifts every fence its sealed subject forgets left: the subject's,
     * and those of the records they removed (their ids may be written again). Record ids forgotten
     * one by one (a {@link ForgetScope#records} forget, or a record another forget removed) may be
     * re-admitted by id, in every collection; a subject's fence then stays, so a record of a
     * subject still forgotten is refused whatever its id. Source and metadata forgets leave fences
     * that stay: forget by id or subject what may come back.
     *
     * <p>Costs, on the caller's thread: two fsynced writes of the operation log, in every
     * collection the writer mutex and one fsynced journal entry, and one ledger append.
     *
     * @param tenant the tenant
     * @param scope a {@link ForgetScope#subject} or {@link ForgetScope#records} scope
     * @param reasonCode why, as a code (see {@link ForgetRequest#checkReasonCode})
     * @return the re-admission, complete, with its ledger entry
     * @throws IllegalArgumentException if the scope is a source or a filter, the reason code is not
     *     a code, or no sealed forget fences the scope (or its fences are lifted already); the
     *     message names the scope by its keyed hash, never the subject or an id
     * @throws IllegalStateException if a forget of the scope is not sealed yet, the evidence ledger
     *     is damaged, or the store is closed
     * @throws java.io.UncheckedIOException if recording it failed; if its intent was recorded, the
     *     next open finishes it
     */
    public Readmission readmit(String tenant, ForgetScope scope, String reasonCode) {
        ensureOpen();
        fault.ensureWritable();
        try {
            return protocol.readmit(tenant, scope, reasonCode);
        } catch (IOException e) {
            throw fault.trip(
                    new UncheckedIOException(
                            "re-admission failed; if its intent was recorded, the next open"
                                    + " finishes it",
                            e));
        }
    }

    /**
     * Every re-admission the store has recorded, oldest first (a pending one, which the next open
     * finishes, has no ledger entry yet). Held in memory: no I/O.
     *
     * @return the re-admissions
     */
    public List<Readmission> readmissions() {
        return protocol.readmissions();
    }

    /**
     * Registers a component that holds data derived from records (a query cache, a text index):
     * every later forget purges and verifies it, and cannot seal while it fails. Before this
     * returns, the surface blocks the scope of every operation not yet sealed (on the caller's
     * thread); a block that throws is recorded against that operation, not thrown here. Surfaces
     * are not saved: register them again after every open.
     *
     * @param surface the surface; its {@link ErasureSurface#name()} must be new to this store
     * @throws IllegalArgumentException if a surface with the same name is registered
     */
    public void registerSurface(ErasureSurface surface) {
        protocol.registerSurface(surface);
    }

    /**
     * Re-reads the evidence ledger and checks its hash chain and every signature, that it still
     * holds the head the store anchored after its last append, and that every sealed operation's
     * receipt names an entry it holds. A ledger cut short, rolled back or replaced fails here (and
     * from then on the store refuses new forgets, see {@link #health()}). Costs a read of the whole
     * file and a signature check per entry, under the forget engine's monitor.
     *
     * @return the verification; {@link LedgerVerification#ok()} is false when the chain breaks or
     *     the cross-checks fail, and its problem says what
     * @throws IOException if the file cannot be read or its header is not a ledger's
     */
    public LedgerVerification verifyLedger() throws IOException {
        return protocol.verifyLedger();
    }

    /**
     * A read-only view of the evidence ledger for auditors: its entries, one operation's entries,
     * receipt and head checks (what {@link LedgerAudit#read} gives from the file and the public key
     * alone). Reads and verifies the whole file on each call.
     *
     * @return the ledger as it is on disk now
     * @throws IOException if the file cannot be read or its header is not a ledger's
     */
    public LedgerAudit evidence() throws IOException {
        return LedgerAudit.read(protocol.ledger().file(), signingKey.publicKey());
    }

    /**
     * The evidence ledger's head now, to hand to an outside witness ({@code SEQ:HASH}). Held in
     * memory: no I/O.
     *
     * @return the last entry's sequence number and hash
     */
    public LedgerHead ledgerHead() {
        return protocol.ledger().head();
    }

    /**
     * When the evidence ledger is damaged and no sound copy of it exists: keeps the damaged file
     * (renamed, unchanged) and starts a new ledger whose first, signed entry records the damage,
     * the archived file's SHA-256 and the sealed operations whose entries were lost, with the
     * operator's reason code. Forgets resume. See docs/FORGET.md, "When the ledger is damaged".
     *
     * @param reasonCode why, as a code
     * @return the new ledger's head
     * @throws IllegalStateException if the ledger is sound (it is never restarted then), or the
     *     store is closed
     * @throws IllegalArgumentException if the reason code is not a code
     * @throws java.io.UncheckedIOException if the restart failed; the store still refuses forgets
     */
    public LedgerHead restartLedger(String reasonCode) {
        ensureOpen();
        fault.ensureWritable();
        try {
            return protocol.restartLedger(reasonCode);
        } catch (IOException e) {
            throw fault.trip(
                    new UncheckedIOException(
                            "restarting the evidence ledger failed; the store still refuses"
                                    + " forgets",
                            e));
        }
    }

    /**
     * Whether the store accepts forgets, and what is wrong if it does not. Held in memory: no I/O
     * (it reports what the last check found; {@link #verifyLedger()} checks the file again).
     *
     * @return the store's health
     * @throws IllegalStateException if the store is closed
     */
    public StoreHealth health() {
        ensureOpen();
        return protocol.health();
    }

    /**
     * The evidence ledger file (verify it offline with {@link #publicKeyPem()} and {@code
     * LedgerVerifier}).
     *
     * @return the path, in the keystore folder
     */
    public Path ledgerFile() {
        return protocol.ledger().file();
    }

    /**
     * The store's Ed25519 public key as PEM: what an auditor needs to verify the ledger and
     * receipts.
     *
     * @return the PEM text
     */
    public String publicKeyPem() {
        return signingKey.publicKeyPem();
    }

    /**
     * A copy of an index generation file of {@code collection}, decrypted; null once its key is
     * destroyed (tests).
     */
    byte[] decryptIndexGeneration(String collection, Path file) throws IOException {
        return IndexGenerations.decrypt(
                file, keystore, context.hashes(), collection(collection).engine().id());
    }

    /**
     * Leaves beside the keys what the next open's reconciliation may skip: the collections that
     * closed cleanly, each with the manifest its close left. A failure only costs the next open the
     * full check, so it is logged, not thrown.
     */
    private void stampCleanClose() {
        if (protocol == null || fault.tripped()) {
            return; // after a failed write the next open must check everything
        }
        Map<String, byte[]> manifests = new HashMap<>();
        for (VectorCollection c : collections.values()) {
            byte[] m = c.engine().storage().manifestAtClose();
            if (m != null) {
                manifests.put(c.engine().id(), m);
            }
        }
        try {
            protocol.stampCleanClose(manifests);
        } catch (IOException | RuntimeException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "the clean-close stamp was not written ({0}); the next open"
                            + " reconciles every collection",
                    e.getMessage());
        }
    }

    /** What reconciliation did when this store opened. */
    ForgetProtocol.ReconciliationReport reconciliation() {
        return protocol.reconciliation();
    }

    /**
     * The store's folder.
     *
     * @return the data folder as it was given to {@link #open}
     */
    public Path folder() {
        return root;
    }

    private VectorCollection openCollection(Path dir, CollectionSpec spec, String id)
            throws IOException {
        var factory = VectorIndexes.factory(spec.index().kind());
        CollectionEngine.TextOpener text =
                spec.textAnalyzer() == null
                        ? null
                        : records ->
                                TextIndexOpener.open(
                                        dir.resolve("text"),
                                        spec.textAnalyzer(),
                                        keystore,
                                        context.hashes(),
                                        spec.name(),
                                        id,
                                        records);
        IndexGenerations generations =
                new IndexGenerations(
                        dir.resolve("index"),
                        keystore,
                        context.hashes(),
                        id,
                        factory,
                        indexConfig(spec),
                        fault);
        return new VectorCollection(
                new CollectionEngine(
                        spec,
                        id,
                        () -> factory.create(indexConfig(spec)),
                        generations,
                        sink -> CollectionStorage.open(dir, id, context, sink),
                        text,
                        embedding(spec),
                        context.hashes()));
    }

    /** The embedder a collection names, or why it has none. */
    private CollectionEngine.Embedding embedding(CollectionSpec spec) {
        if (spec.embedder() == null) {
            return CollectionEngine.Embedding.NONE;
        }
        Embedder e = options.embedders().get(spec.embedder());
        if (e == null) {
            return new CollectionEngine.Embedding(
                    null,
                    "it embeds with '"
                            + spec.embedder()
                            + "', and this store was opened without an embedder of that name"
                            + " (StoreOptions.withEmbedder); it has "
                            + options.embedders().keySet());
        }
        if (e.dimension() != spec.dimension()) {
            return new CollectionEngine.Embedding(
                    null,
                    "its embedder '"
                            + spec.embedder()
                            + "' gives vectors of "
                            + e.dimension()
                            + " dimensions, and the collection holds "
                            + spec.dimension());
        }
        return new CollectionEngine.Embedding(e, null);
    }

    private static IndexConfig indexConfig(CollectionSpec spec) {
        return new IndexConfig(spec.dimension(), spec.metric(), spec.index().params(), INDEX_SEED);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("store " + root + " is closed");
        }
    }

    /**
     * Closes the store: the forget worker stops after the phase it is in (waiting up to two
     * minutes; unfinished operations resume at the next open), then every collection folds what its
     * log holds into segments and closes, then the journal and keystore close and the folder lock
     * is released. Everything is closed even when a part fails. Calling it again does nothing.
     *
     * @throws IOException the first failure, with any later ones suppressed
     */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        // Close everything even if something fails; report the first failure, the rest suppressed.
        List<java.io.Closeable> parts = new ArrayList<>();
        // The forget worker first: it finishes its phase while the collections are still open.
        parts.add(protocol);
        collections.values().forEach(c -> parts.add(c.engine()::close));
        parts.add(journal);
        parts.add(keystore);
        IOException first = null;
        for (java.io.Closeable c : parts) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (IOException | RuntimeException e) {
                // Every part is closed (and its locks released) whatever an earlier one threw.
                fault.trip(e);
                IOException io =
                        e instanceof IOException x
                                ? x
                                : new IOException("closing the store: " + e, e);
                if (first == null) {
                    first = io;
                } else {
                    first.addSuppressed(io);
                }
            }
        }
        stampCleanClose();
        collections.clear();
        lock.release();
        lockChannel.close();
        if (first != null) {
            throw first;
        }
    }
}
