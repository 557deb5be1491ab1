package dev.nepenthe.core.internal.store;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.embed.Embedder;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.Embedding;
import dev.nepenthe.core.internal.engine.IndexGenerations;
import dev.nepenthe.core.internal.engine.StoreFolders;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.core.internal.forget.ForgetProtocol;
import dev.nepenthe.core.internal.index.VectorIndexes;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.io.FileCopies;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.io.TestPoints;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.storage.RecordSealer;
import dev.nepenthe.core.internal.storage.StoreContext;
import dev.nepenthe.core.internal.storage.TombstoneJournal;
import dev.nepenthe.core.internal.text.TextIndex;
import dev.nepenthe.core.internal.text.TextIndexOpener;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * What one open store shares across its collections: the master key's keystore, the tombstone
 * journal, the storage context, the signing key and the forget protocol, and how collections are
 * found, opened, created and dropped in the data folder. The facade ({@code Nepenthe}) keeps the
 * public API and its rules (the monitor, the collections by name); the wiring is here, so that the
 * facade reads as the API it is.
 */
public final class StoreServices {

    private static final System.Logger LOG = System.getLogger(StoreServices.class.getName());

    /**
     * The seed handed to every index factory for its random choices (see {@link
     * IndexConfig#seed()}).
     */
    private static final long INDEX_SEED = 42L;

    private final Path root;
    private final Path keys;
    private final StoreOptions options;
    private final StorageFault fault;
    private final TestPoints testPoints;
    private Keystore keystore;
    private TombstoneJournal journal;
    private StoreContext context;
    private SigningKey signingKey;
    private ForgetProtocol protocol;
    private MasterKey master;

    private StoreServices(
            Path root, Path keys, StoreOptions options, StorageFault fault, TestPoints points) {
        this.root = root;
        this.keys = keys;
        this.options = options;
        this.fault = fault;
        this.testPoints = points;
    }

    /**
     * Checks that the keystore folder {@code keys} lies outside the data folder {@code folder}.
     *
     * @throws IllegalArgumentException if it is inside
     */
    public static void checkKeystoreApart(Path keys, Path folder) {
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
    }

    /**
     * Opens the keys of the store in {@code root}, kept in {@code keys}: the master key (generated
     * if the options allow), the keystore and the tombstone journal. Close the result if a later
     * step fails.
     */
    public static StoreServices openKeys(
            Path root, Path keys, StoreOptions options, StorageFault fault, TestPoints points)
            throws IOException {
        StoreServices s = new StoreServices(root, keys, options, fault, points);
        s.master =
                MasterKey.resolve(
                        options.masterKeyFile() != null
                                ? options.masterKeyFile()
                                : keys.resolve("master.key"),
                        options.generateMasterKey(),
                        points);
        s.keystore = Keystore.open(keys, s.master, points);
        try {
            // A keystore opened with another master key (a replica given the wrong group key) is
            // refused here, before any collection is read: the signing key does not unwrap.
            Path signing = s.signingKeyFile();
            if (Files.exists(signing)) {
                s.signingKey =
                        SigningKey.loadOrCreate(signing, s.master.derive("evidence-signing-key"));
            }
            s.journal = TombstoneJournal.open(keys.resolve("tombstones"), points);
        } catch (IOException | RuntimeException e) {
            s.close(List.of());
            throw e;
        }
        s.context =
                new StoreContext(
                        s.keystore,
                        new KeyedHash(s.master),
                        s.journal,
                        RecordSealer.AES_GCM,
                        options.durability(),
                        options.checkpointBytes(),
                        options.shardBuckets(),
                        fault,
                        points);
        return s;
    }

    private Path signingKeyFile() {
        return keys.resolve("evidence").resolve("signing.key");
    }

    /**
     * Opens every collection of the data folder, in folder order. A folder whose creation did not
     * finish is removed; a collection the journal says was dropped has its drop finished.
     *
     * @throws CorruptFileException if a collection folder holds data without its meta file
     */
    public List<CollectionEngine> loadCollections() throws IOException {
        List<CollectionEngine> out = new ArrayList<>();
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
                    throw new CorruptFileException(
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
                    finishDrop(dir, meta.id());
                    continue;
                }
                out.add(openCollection(dir, meta.spec(), meta.id()));
            }
        }
        return out;
    }

    private void finishDrop(Path dir, String id) throws IOException {
        CrashPoints.during(
                testPoints,
                () -> {
                    CollectionStorage.purgeDropped(dir, id, context);
                    return null;
                });
        TextIndex.destroyFolder(dir.resolve("text"), keystore, context.hashes(), id);
        IndexGenerations.destroyFolder(dir.resolve("index"), keystore, context.hashes(), id);
        StoreFolders.deleteTree(dir);
    }

    /** Opens one collection's engine over its folder. */
    private CollectionEngine openCollection(Path dir, CollectionSpec spec, String id)
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
        return new CollectionEngine(
                spec,
                id,
                () -> factory.create(indexConfig(spec)),
                generations,
                sink -> CollectionStorage.open(dir, id, context, sink),
                text,
                Embedding.of(spec, options.embedders()),
                context.hashes(),
                testPoints);
    }

    private static IndexConfig indexConfig(CollectionSpec spec) {
        return new IndexConfig(spec.dimension(), spec.metric(), spec.index().params(), INDEX_SEED);
    }

    /**
     * Creates a collection's folder and meta file (fsynced; the meta file's rename is the commit
     * point) and opens it, after checking the index kind and parameters (by building an empty
     * index) and the embedder, before anything touches the disk.
     *
     * @throws IllegalArgumentException if the index kind is unknown, its parameters invalid, or the
     *     embedder missing or of another dimension
     */
    public CollectionEngine createCollection(CollectionSpec spec) throws IOException {
        VectorIndexes.factory(spec.index().kind()).create(indexConfig(spec)).close();
        checkEmbedder(spec, options.embedders());
        Path dir = root.resolve("collections").resolve(spec.name());
        String id = HexFormat.of().formatHex(ChecksummedFiles.newFileId());
        Files.createDirectories(dir);
        CrashPoints.during(
                testPoints,
                () -> {
                    StoreFolders.writeMeta(dir.resolve("collection.meta"), spec, id);
                    return null;
                });
        CollectionEngine engine = openCollection(dir, spec, id);
        protocol.adopt(engine);
        return engine;
    }

    private static void checkEmbedder(CollectionSpec spec, Map<String, Embedder> embedders) {
        if (spec.embedder() == null) {
            return;
        }
        Embedder e = embedders.get(spec.embedder());
        if (e == null) {
            throw new IllegalArgumentException(
                    "collection '"
                            + spec.name()
                            + "': embedder '"
                            + spec.embedder()
                            + "' is not one this store was opened with"
                            + " (StoreOptions.withEmbedder); it has "
                            + embedders.keySet());
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

    /**
     * Drops a collection already out of the facade's map: its keys destroyed, the engine closed,
     * its files deleted.
     */
    public void dropCollection(CollectionEngine engine) throws IOException {
        engine.destroyAllKeys();
        engine.close();
        StoreFolders.deleteTree(root.resolve("collections").resolve(engine.name()));
        ChecksummedFiles.fsyncDirectory(root.resolve("collections"));
    }

    /**
     * Copies every collection's meta file and a consistent image of its data files into {@code
     * target}, collection by collection (each one's writers wait while it is copied), registering
     * the snapshot with the forget protocol after each, so later forgets purge it too.
     */
    public void snapshot(List<CollectionEngine> engines, Path target) throws IOException {
        for (CollectionEngine e : engines) {
            Path dst = target.resolve("collections").resolve(e.name());
            Files.createDirectories(dst);
            FileCopies.copyRegularFile(
                    root.resolve("collections").resolve(e.name()).resolve("collection.meta"),
                    dst.resolve("collection.meta"));
            e.snapshotTo(dst);
            try {
                protocol.registerSnapshot(target, e);
            } catch (IOException | RuntimeException x) {
                // Unregistered, a later forget would not purge this snapshot: nothing more is
                // written.
                fault.trip(x);
                throw x;
            }
        }
        Files.createDirectories(target.resolve("collections"));
    }

    /** What a replica image held: file frames and the bytes of their contents. */
    public record ReplicaImageSent(int files, long bytes) {}

    /**
     * Streams a replica image of the data and keystore folders to {@code out} (see {@link
     * ReplicaImageWriter}) while nothing writes them. Every path that writes a file of either
     * folder while the store is open is held, in this order (the caller holds the store's monitor,
     * which holds collection creation, drops, snapshots and the close):
     *
     * <ol>
     *   <li>the forget protocol's writes ({@link ForgetProtocol#pauseWrites}): marks, overrides,
     *       holds, re-admissions, ledger restarts, and the worker, which finishes its step;
     *   <li>every collection's writer mutex, in the order of {@code engines}: upserts, deletes,
     *       checkpoints, index generations written, text commits and refreshes;
     *   <li>what those left running: deletions of destroyed index generations and text index
     *       merges, awaited.
     * </ol>
     *
     * Searches go on throughout. A failure of {@code out} changes nothing in the store.
     */
    public ReplicaImageSent writeReplicaImage(List<CollectionEngine> engines, OutputStream out)
            throws IOException {
        ForgetProtocol.Pause pause = protocol.pauseWrites();
        try {
            List<CollectionEngine> held = new ArrayList<>();
            try {
                for (CollectionEngine e : engines) {
                    e.writer().lock();
                    held.add(e);
                }
                for (CollectionEngine e : engines) {
                    e.awaitBackgroundFileWork();
                }
                ReplicaImageWriter.Sent sent =
                        new ReplicaImageWriter(root, keys, keystore, options.masterKeyFile())
                                .write(out);
                return new ReplicaImageSent(sent.files(), sent.bytes());
            } finally {
                for (int i = held.size() - 1; i >= 0; i--) {
                    held.get(i).writer().unlock();
                }
            }
        } finally {
            pause.close();
        }
    }

    /**
     * Starts the forget protocol over the collections {@code engines} supplies: the signing key,
     * the protocol (its operations re-marked and reconciled), the ledger witness checked.
     *
     * @throws IllegalStateException if the options' ledger witness is not in the ledger
     */
    public void startForgetting(
            Supplier<List<CollectionEngine>> engines, List<ErasureSurface> surfaces)
            throws IOException {
        if (signingKey == null) {
            signingKey =
                    SigningKey.loadOrCreate(
                            signingKeyFile(), master.derive("evidence-signing-key"));
        }
        protocol =
                new ForgetProtocol(
                        keys,
                        context.hashes(),
                        keystore,
                        signingKey,
                        engines,
                        options.forgetWorkerNice(),
                        options.probePolicy(),
                        fault,
                        testPoints);
        if (options.ledgerWitness() != null) {
            LedgerAudit.Check c = protocol.ledger().audit().checkHead(options.ledgerWitness());
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
        // Registered before the unfinished operations resume: a surface registered later would
        // not be asked to purge for an operation whose cleanup ran before it came.
        for (ErasureSurface s : surfaces) {
            protocol.registerSurface(s);
        }
        protocol.start();
    }

    public ForgetProtocol protocol() {
        return protocol;
    }

    public SigningKey signingKey() {
        return signingKey;
    }

    public Keystore keystore() {
        return keystore;
    }

    public StoreContext context() {
        return context;
    }

    /**
     * Leaves beside the keys what the next open's reconciliation may skip: the collections that
     * closed cleanly, each with the manifest its close left. A failure only costs the next open the
     * full check, so it is logged, not thrown.
     */
    public void stampCleanClose(List<CollectionEngine> engines) {
        if (protocol == null || fault.tripped()) {
            return; // after a failed write the next open must check everything
        }
        Map<String, byte[]> manifests = new HashMap<>();
        for (CollectionEngine c : engines) {
            byte[] m = c.storage().manifestAtClose();
            if (m != null) {
                manifests.put(c.id(), m);
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

    /**
     * Closes the forget worker first (it finishes its phase while the collections are still open),
     * then every collection, then the journal and the keystore; every part is closed whatever an
     * earlier one threw, and each failure trips the latch.
     *
     * @return the first failure, with any later ones suppressed, or null
     */
    public IOException close(List<CollectionEngine> engines) {
        List<Closeable> parts = new ArrayList<>();
        parts.add(protocol);
        engines.forEach(c -> parts.add(c::close));
        parts.add(journal);
        parts.add(keystore);
        IOException first = null;
        for (Closeable c : parts) {
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
        return first;
    }
}
