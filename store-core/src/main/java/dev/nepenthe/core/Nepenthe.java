package dev.nepenthe.core;

import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.JvmFlags;
import dev.nepenthe.core.internal.engine.NoPhoneHome;
import dev.nepenthe.core.internal.engine.StoreFolders;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.core.internal.forget.ForgetProtocol;
import dev.nepenthe.core.internal.index.VectorIndexes;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.storage.StoreContext;
import dev.nepenthe.core.internal.storage.TombstoneJournal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
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
 * <p>Data folder: {@code store.lock} (held while open, so two processes cannot share a
 * folder) and {@code collections/<name>/} with {@code collection.meta}, {@code MANIFEST},
 * {@code wal/} (write-ahead log), {@code segments/} (one immutable file per shard bucket) and
 * {@code idmap.cmap} (Chronicle Map from keyed id hashes to ordinals). Every byte of record
 * content in them is encrypted under its subject's key.
 *
 * <p>Keystore folder (apart from the data, never in a snapshot; default
 * {@code <data folder>.keys}): {@code keys.db} (wrapped per-subject keys), {@code master.key}
 * (only when generated for the embedded default), {@code tombstones/} (the journal of
 * deletions every open replays), {@code operations/} (forget operations and legal holds),
 * {@code evidence/} (the signed evidence ledger and the signing key) and
 * {@code snapshots.registry} (the snapshots a forget must purge).
 */
public final class Nepenthe implements AutoCloseable {

    static {
        // Before Chronicle Map (the id map) can load: it reports usage unless told not to.
        NoPhoneHome.apply();
    }

    /** Version 2 adds the provenance policy; version 1 files read as CASCADE. */
    private static final long INDEX_SEED = 42L;
    private static final System.Logger LOG = System.getLogger(Nepenthe.class.getName());

    private final Path root;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final StoreOptions options;
    /** Sorted and concurrent: {@link #collection} reads it without this store's monitor. */
    private final Map<String, VectorCollection> collections = new java.util.concurrent.ConcurrentSkipListMap<>();
    /** A copy of the collections for the forget worker, which must not wait on this store's monitor. */
    private volatile List<CollectionEngine> collectionList = List.of();
    private ForgetProtocol protocol;
    private SigningKey signingKey;
    private Keystore keystore;
    private TombstoneJournal journal;
    private StoreContext context;
    private volatile boolean closed;

    private Nepenthe(Path root, FileChannel lockChannel, FileLock lock, StoreOptions options) {
        this.root = root;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.options = options;
    }

    /** Opens the store in {@code folder} with {@link StoreOptions#defaults()}. */
    public static Nepenthe open(Path folder) throws IOException {
        return open(folder, StoreOptions.defaults());
    }

    /**
     * Opens (creating if needed) the store in {@code folder} and loads its collections.
     *
     * @throws IOException if the folder is in use by another process or a file is corrupt
     *     (the message names the file)
     * @throws IllegalStateException if the JVM lacks flags the store needs (the message lists
     *     every missing one; see the README)
     */
    public static Nepenthe open(Path folder, StoreOptions options) throws IOException {
        JvmFlags.check();
        Path keys = options.keystoreFor(folder);
        Path data = folder.toAbsolutePath().normalize();
        if (keys.startsWith(data)) {
            throw new IllegalArgumentException("keystore folder " + keys + " is inside the data folder " + data
                    + ": expected it apart, or snapshots and backups of the data would carry the keys");
        }
        Files.createDirectories(folder.resolve("collections"));
        FileChannel ch = FileChannel.open(folder.resolve("store.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        if (lock == null) {
            ch.close();
            throw new IOException("store folder " + folder + " is in use by another process (store.lock is held)");
        }
        Nepenthe store = new Nepenthe(folder, ch, lock, options);
        try {
            MasterKey master = MasterKey.resolve(
                    options.masterKeyFile() != null ? options.masterKeyFile() : keys.resolve("master.key"),
                    options.generateMasterKey());
            store.keystore = Keystore.open(keys, master);
            store.journal = TombstoneJournal.open(keys.resolve("tombstones"));
            store.context = new StoreContext(store.keystore, new KeyedHash(master), store.journal,
                    dev.nepenthe.core.internal.storage.RecordSealer.AES_GCM, options.durability(), options.checkpointBytes(), options.shardBuckets());
            store.loadCollections();
            store.signingKey = SigningKey.loadOrCreate(keys.resolve("evidence").resolve("signing.key"),
                    master.derive("evidence-signing-key"));
            store.protocol = new ForgetProtocol(keys, store.context.hashes(), store.keystore, store.signingKey,
                    () -> store.collectionList, options.forgetWorkerNice(), options.probePolicy());
            if (options.ledgerWitness() != null) {
                LedgerAudit.Check c = store.protocol.ledger().audit().checkHead(options.ledgerWitness());
                if (!c.ok()) {
                    throw new IllegalStateException("keystore folder " + keys + ": its evidence ledger does not hold the"
                            + " witnessed head " + options.ledgerWitness() + " (" + c.problem() + "). The keystore is"
                            + " older than the witness: forgets recorded after it are missing, and records they erased"
                            + " could be served again. Refusing to open; restore a keystore copy that holds the witnessed"
                            + " head, or open without the witness to accept that knowingly");
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
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(root.resolve("collections"), Files::isDirectory)) {
            for (Path dir : dirs) {
                Path metaFile = dir.resolve("collection.meta");
                if (!Files.exists(metaFile)) {
                    if (StoreFolders.isUnfinishedCreation(dir)) {
                        // A crash inside createCollection before its meta file (the commit point)
                        // was renamed into place: the collection never existed.
                        LOG.log(System.Logger.Level.WARNING, "{0}: removing a collection folder whose creation did"
                                + " not finish (no collection.meta; a crash during createCollection)", dir);
                        StoreFolders.deleteTree(dir);
                        continue;
                    }
                    throw new dev.nepenthe.core.CorruptFileException(metaFile, "collection folder " + dir.getFileName()
                            + " holds data but its collection.meta is missing (deleted or lost?)");
                }
                StoreFolders.Meta meta = StoreFolders.readMeta(metaFile);
                if (journal.isDropped(context.hashes().of("collection", meta.id()))) {
                    // Dropped after the files were written (a restored snapshot, or a crash
                    // mid-drop): finish the drop before anything is served.
                    CollectionStorage.purgeDropped(dir, meta.id(), context);
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
     * Creates a collection.
     *
     * @throws IllegalArgumentException if the name is taken or the index parameters are invalid
     */
    public synchronized VectorCollection createCollection(CollectionSpec spec) {
        ensureOpen();
        if (collections.containsKey(spec.name())) {
            throw new IllegalArgumentException("collection '" + spec.name() + "' already exists");
        }
        // Validate the index parameters before anything touches the disk.
        VectorIndexes.factory(spec.index().kind()).create(indexConfig(spec)).close();
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
            throw new UncheckedIOException("creating collection '" + spec.name() + "' failed", e);
        }
    }

    /**
     * The collection with this name.
     *
     * @throws UnknownCollectionException listing the collections that exist
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

    /** Tenants with at least one live record in any collection, sorted. */
    public List<String> tenants() {
        ensureOpen();
        java.util.TreeSet<String> out = new java.util.TreeSet<>();
        collections.values().forEach(c -> out.addAll(c.tenants()));
        return List.copyOf(out);
    }

    /** Specs of every collection, by name. */
    public synchronized List<CollectionSpec> collections() {
        ensureOpen();
        List<CollectionSpec> out = new ArrayList<>();
        collections.values().forEach(c -> out.add(c.spec()));
        return out;
    }

    /**
     * Drops a collection: its keys are destroyed (so copies in snapshots become unreadable),
     * the drop is journaled (so a restore cannot bring it back) and its files are deleted.
     *
     * @return false if no such collection existed
     */
    public synchronized boolean dropCollection(String name) {
        ensureOpen();
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
            throw new UncheckedIOException("dropping collection '" + name + "' failed", e);
        }
    }

    /**
     * Writes a consistent copy of every collection's data files to {@code target} (which must
     * not exist yet) while the store keeps serving searches; writers wait per collection. The
     * keystore is not copied: a snapshot is readable only with this store's keystore, and a
     * subject forgotten later stays forgotten in it.
     */
    public synchronized void snapshot(Path target) throws IOException {
        ensureOpen();
        if (Files.exists(target)) {
            throw new IllegalArgumentException("snapshot target " + target + " already exists; expected a new folder");
        }
        for (Map.Entry<String, VectorCollection> e : collections.entrySet()) {
            Path dst = target.resolve("collections").resolve(e.getKey());
            Files.createDirectories(dst);
            Files.copy(root.resolve("collections").resolve(e.getKey()).resolve("collection.meta"), dst.resolve("collection.meta"));
            e.getValue().engine().snapshotTo(dst);
            protocol.registerSnapshot(target, e.getValue().engine());
        }
        Files.createDirectories(target.resolve("collections"));
    }

    /**
     * Copies a snapshot into {@code folder}, which must be absent or empty. Open the store
     * afterwards as usual: opening replays the tombstone journal, so whatever was deleted or
     * forgotten after the snapshot was taken is dropped (and its files rewritten) before
     * anything is served.
     */
    public static void restore(Path snapshot, Path folder) throws IOException {
        StoreFolders.copySnapshot(snapshot, folder);
    }

    /**
     * Copies a snapshot into {@code folder} (absent or empty) and opens it with {@code options},
     * so it opens against the keystore that took the snapshot: the tombstone journal drops what
     * was deleted or forgotten since, and reconciliation re-checks every sealed forget, before
     * the returned store serves anything.
     *
     * @throws IllegalArgumentException if the source is not a snapshot or the target not empty
     */
    public static Nepenthe restore(Path snapshot, Path folder, StoreOptions options) throws IOException {
        restore(snapshot, folder);
        return open(folder, options);
    }

    // ---- the forget protocol -----------------------------------------------------------------

    /**
     * Starts forgetting: marks the scope in every collection (from the moment this returns no
     * search, get or list returns a record in scope, and writes in scope are refused), records
     * the operation durably and returns it, BLOCKED. Cleanup, verification and sealing continue
     * on the store's forget worker; follow them with {@link #operation} or
     * {@link #awaitOperation}. The same idempotency key returns the same operation.
     *
     * @throws IllegalArgumentException if the idempotency key was used for a different request
     */
    public ForgetOperation forget(ForgetRequest request) {
        ensureOpen();
        try {
            return protocol.forget(request);
        } catch (IOException e) {
            throw new UncheckedIOException("forget: recording the operation failed; if it was marked, the next open"
                    + " resumes it", e);
        }
    }

    public Optional<ForgetOperation> operation(String id) {
        return protocol.operation(id);
    }

    /** Operations that pass {@code filter}, oldest first. */
    public List<ForgetOperation> operations(Predicate<ForgetOperation> filter) {
        return protocol.operations(filter);
    }

    /**
     * Waits until an operation is SEALED, COMPLETED_WITH_EXCEPTION or NEEDS_REVIEW (or stopped on
     * a failure its note names).
     *
     * @throws IllegalStateException if it has not settled within {@code timeout}
     */
    public ForgetOperation awaitOperation(String id, Duration timeout) throws InterruptedException {
        return protocol.await(id, timeout);
    }

    /** Runs verification again for an operation in NEEDS_REVIEW, after more was forgotten. */
    public ForgetOperation reverify(String operationId) {
        return protocol.reverify(operationId);
    }

    /**
     * Seals an operation in NEEDS_REVIEW whose suspects the operator judged not to be residue;
     * the override and its reason code go into the evidence and the receipt.
     */
    public ForgetOperation override(String operationId, String reasonCode) {
        try {
            return protocol.override(operationId, reasonCode);
        } catch (IOException e) {
            throw new UncheckedIOException("override of " + operationId + " failed; the operation stays in review", e);
        }
    }

    /** Places a legal hold on a subject or a source (every version) in a tenant. */
    public LegalHold placeHold(String tenant, ForgetScope scope, String reasonCode) {
        try {
            return protocol.placeHold(tenant, scope, reasonCode);
        } catch (IOException e) {
            throw new UncheckedIOException("placing the legal hold failed", e);
        }
    }

    /** Lifts a legal hold; forget operations it stopped resume. */
    public void liftHold(String holdId) {
        try {
            protocol.liftHold(holdId);
        } catch (IOException e) {
            throw new UncheckedIOException("lifting legal hold " + holdId + " failed", e);
        }
    }

    public List<LegalHold> holds() {
        return protocol.holds();
    }

    /**
     * Registers a component that holds data derived from records (a query cache, a text index):
     * every later forget purges and verifies it, and cannot seal while it fails.
     */
    public void registerSurface(ErasureSurface surface) {
        protocol.registerSurface(surface);
    }

    /**
     * Re-reads the evidence ledger and checks its hash chain and every signature, that it still
     * holds the head the store anchored after its last append, and that every sealed operation's
     * receipt names an entry it holds. A ledger cut short, rolled back or replaced fails here
     * (and from then on the store refuses new forgets, see {@link #health()}).
     */
    public LedgerVerification verifyLedger() throws IOException {
        return protocol.verifyLedger();
    }

    /**
     * A read-only view of the evidence ledger for auditors: its entries, one operation's
     * entries, receipt and head checks (what {@link LedgerAudit#read} gives from the file and
     * the public key alone).
     */
    public LedgerAudit evidence() throws IOException {
        return LedgerAudit.read(protocol.ledger().file(), signingKey.publicKey());
    }

    /** The evidence ledger's head now, to hand to an outside witness ({@code SEQ:HASH}). */
    public LedgerHead ledgerHead() {
        return protocol.ledger().head();
    }

    /**
     * When the evidence ledger is damaged and no sound copy of it exists: keeps the damaged file
     * (renamed, unchanged) and starts a new ledger whose first, signed entry records the damage,
     * the archived file's SHA-256 and the sealed operations whose entries were lost, with the
     * operator's reason code. Forgets resume. See docs/FORGET.md, "When the ledger is damaged".
     *
     * @return the new ledger's head
     * @throws IllegalStateException if the ledger is sound (it is never restarted then)
     */
    public LedgerHead restartLedger(String reasonCode) {
        ensureOpen();
        try {
            return protocol.restartLedger(reasonCode);
        } catch (IOException e) {
            throw new UncheckedIOException("restarting the evidence ledger failed; the store still refuses forgets", e);
        }
    }

    /** Whether the store accepts forgets, and what is wrong if it does not. */
    public StoreHealth health() {
        ensureOpen();
        return protocol.health();
    }

    /** The evidence ledger file (verify it offline with {@link #publicKeyPem()} and {@code LedgerVerifier}). */
    public Path ledgerFile() {
        return protocol.ledger().file();
    }

    /** The store's Ed25519 public key as PEM: what an auditor needs to verify the ledger and receipts. */
    public String publicKeyPem() {
        return signingKey.publicKeyPem();
    }

    /** What reconciliation did when this store opened. */
    ForgetProtocol.ReconciliationReport reconciliation() {
        return protocol.reconciliation();
    }

    /** The store's folder. */
    public Path folder() {
        return root;
    }

    private VectorCollection openCollection(Path dir, CollectionSpec spec, String id) throws IOException {
        var factory = VectorIndexes.factory(spec.index().kind());
        return new VectorCollection(new CollectionEngine(spec, id, () -> factory.create(indexConfig(spec)),
                sink -> CollectionStorage.open(dir, id, context, sink)));
    }

    private static IndexConfig indexConfig(CollectionSpec spec) {
        return new IndexConfig(spec.dimension(), spec.metric(), spec.index().params(), INDEX_SEED);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("store " + root + " is closed");
        }
    }

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
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        collections.clear();
        lock.release();
        lockChannel.close();
        if (first != null) {
            throw first;
        }
    }
}
