package dev.nepenthe.core;

import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.IndexGenerations;
import dev.nepenthe.core.internal.engine.JvmFlags;
import dev.nepenthe.core.internal.engine.NoPhoneHome;
import dev.nepenthe.core.internal.engine.StoreFolders;
import dev.nepenthe.core.internal.forget.ForgetProtocol;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.io.TestPoints;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.store.StoreLock;
import dev.nepenthe.core.internal.store.StoreServices;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListMap;

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
 * <p>Safe for concurrent use. Collection management, snapshots and replica copies ({@link
 * #createCollection}, {@link #dropCollection}, {@link #collections()}, {@link #snapshot}, {@link
 * ReplicaCopy#write}, {@link #close()}) take turns on this store's monitor; looking a collection up
 * ({@link #collection}) never waits for them. Forgets, holds and overrides take turns on the forget
 * engine's monitor for their bookkeeping, and one background worker carries operations through
 * cleanup, verification and sealing.
 */
public final class Nepenthe extends ForgetFacade implements AutoCloseable {

    static {
        // Before Chronicle Map (the id map) can load: it reports usage unless told not to.
        NoPhoneHome.apply();
        // Tests in other packages reach an open store's test points through this.
        TestPoints.registerStoreLookup(
                s -> {
                    if (!(s instanceof Nepenthe store)) {
                        throw new IllegalArgumentException(
                                "expected a Nepenthe store, got "
                                        + (s == null ? "null" : s.getClass().getName()));
                    }
                    return store.testPoints;
                });
    }

    private final Path root;
    private final StoreLock lock;

    /** Sorted and concurrent: {@link #collection} reads it without this store's monitor. */
    private final Map<String, VectorCollection> collections = new ConcurrentSkipListMap<>();

    /**
     * A copy of the collections for the forget worker, which must not wait on this store's monitor.
     */
    private volatile List<CollectionEngine> collectionList = List.of();

    /** This store's test points (crash points, forget stops, search pauses); idle unless set. */
    private final TestPoints testPoints;

    private volatile boolean closed;

    private Nepenthe(Path root, StoreLock lock, TestPoints testPoints) {
        this.root = root;
        this.lock = lock;
        this.testPoints = testPoints;
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
        return open(folder, options, List.of(), new TestPoints());
    }

    /**
     * Opens the store as {@link #open(Path, StoreOptions)} does, with erasure surfaces registered
     * before unfinished forget operations resume: a surface registered after the open (by {@link
     * #registerSurface}) takes part in the operations from then on, but one whose cleanup had run
     * before it came does not ask it to purge. A surface that holds data across restarts (a log of
     * its own, say) registers here.
     *
     * @param folder the data folder, created if needed
     * @param options where the keys live and how the store behaves
     * @param surfaces the surfaces, each with a name of its own
     * @return the open store
     * @throws IOException as {@link #open(Path, StoreOptions)}
     * @throws IllegalArgumentException as {@link #open(Path, StoreOptions)}, or if two surfaces
     *     share a name
     */
    public static Nepenthe open(Path folder, StoreOptions options, List<ErasureSurface> surfaces)
            throws IOException {
        return open(folder, options, surfaces, new TestPoints());
    }

    /**
     * Opens the store with test points a test set beforehand (a crash during the open itself). For
     * tests only.
     */
    static Nepenthe open(Path folder, StoreOptions options, TestPoints testPoints)
            throws IOException {
        return open(folder, options, List.of(), testPoints);
    }

    private static Nepenthe open(
            Path folder, StoreOptions options, List<ErasureSurface> surfaces, TestPoints testPoints)
            throws IOException {
        JvmFlags.check();
        CollectionStorage.warmUpInBackground();
        StoreServices.checkKeystoreApart(options.keystoreFor(folder), folder);
        Files.createDirectories(folder.resolve("collections"));
        Nepenthe store = new Nepenthe(folder, StoreLock.acquire(folder), testPoints);
        try {
            // Crash points of the storage on the way report to this store's (CrashPoints).
            CrashPoints.during(
                    testPoints,
                    () -> {
                        store.start(options, surfaces);
                        return null;
                    });
        } catch (IOException | RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    /** Opens the keys, loads the collections, then starts the forget protocol over them. */
    private void start(StoreOptions options, List<ErasureSurface> surfaces) throws IOException {
        services =
                StoreServices.openKeys(root, options.keystoreFor(root), options, fault, testPoints);
        for (CollectionEngine e : services.loadCollections()) {
            collections.put(e.name(), new VectorCollection(e));
        }
        collectionList = engines();
        services.startForgetting(() -> collectionList, surfaces);
        protocol = services.protocol();
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
        try {
            VectorCollection c = new VectorCollection(services.createCollection(spec));
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
        TreeSet<String> out = new TreeSet<>();
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
     * @throws dev.nepenthe.core.forget.HeldRecordsException if a legal hold keeps any record of the
     *     collection: nothing is dropped
     * @throws IllegalStateException if the store is closed
     */
    public synchronized boolean dropCollection(String name) {
        ensureOpen();
        fault.ensureWritable();
        VectorCollection c = collections.get(name);
        if (c == null) {
            return false;
        }
        c.engine().checkDroppable();
        collections.remove(name);
        collectionList = engines();
        try {
            services.dropCollection(c.engine());
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
        services.snapshot(engines(), target);
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

    /**
     * Streams a replica image of this store (see {@link ReplicaCopy#write}) under this store's
     * monitor, so no collection is created or dropped, no snapshot taken and no close begun
     * meanwhile; {@link StoreServices#writeReplicaImage} holds the rest.
     */
    synchronized StoreServices.ReplicaImageSent writeReplicaImage(OutputStream out)
            throws IOException {
        ensureOpen();
        // A store that failed a write cannot vouch for its files (the next open recovers them).
        fault.ensureWritable();
        return services.writeReplicaImage(engines(), out);
    }

    /**
     * A copy of an index generation file of {@code collection}, decrypted; null once its key is
     * destroyed (tests).
     */
    byte[] decryptIndexGeneration(String collection, Path file) throws IOException {
        return IndexGenerations.decrypt(
                file,
                services.keystore(),
                services.context().hashes(),
                collection(collection).engine().id());
    }

    /** This store's test points, for tests in this package; see {@link TestPoints#of}. */
    TestPoints testPoints() {
        return testPoints;
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

    @Override
    void ensureOpen() {
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
        if (services == null) {
            lock.close();
            return;
        }
        List<CollectionEngine> engines = engines();
        IOException first = CrashPoints.during(testPoints, () -> services.close(engines));
        services.stampCleanClose(engines);
        collections.clear();
        lock.close();
        if (first != null) {
            throw first;
        }
    }
}
