package dev.nepenthe.core;

import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.index.VectorIndexes;
import dev.nepenthe.core.io.ChecksummedFiles;
import dev.nepenthe.core.storage.RecordLogFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * An embedded Nepenthe store on a local folder.
 *
 * <pre>{@code
 * try (Nepenthe store = Nepenthe.open(Path.of("data"))) {
 *     VectorCollection notes = store.createCollection(CollectionSpec.of("notes", 384, Metric.COSINE));
 *     notes.upsert(VectorRecord.builder("n1").subject("alice").vector(v).text("...").build());
 *     List<SearchHit> hits = notes.search(SearchRequest.of(q, 5));
 *     notes.deleteSubject(VectorRecord.DEFAULT_TENANT, "alice");
 * }
 * }</pre>
 *
 * <p>Folder layout: {@code store.lock} (held while open, so two processes cannot share a
 * folder) and {@code collections/<name>/} with {@code collection.meta} and the collection's
 * {@code records.log}.
 */
public final class Nepenthe implements AutoCloseable {

    static final String COLLECTION_FORMAT = "nepenthe-collection";
    static final int COLLECTION_VERSION = 1;
    private static final long INDEX_SEED = 42L;

    private final Path root;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final Map<String, VectorCollection> collections = new TreeMap<>();
    private boolean closed;

    private Nepenthe(Path root, FileChannel lockChannel, FileLock lock) {
        this.root = root;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /**
     * Opens (creating if needed) the store in {@code folder} and loads its collections.
     *
     * @throws IOException if the folder is in use by another process or a file is corrupt
     *     (the message names the file)
     */
    public static Nepenthe open(Path folder) throws IOException {
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
        Nepenthe store = new Nepenthe(folder, ch, lock);
        try {
            store.loadCollections();
        } catch (IOException | RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    private void loadCollections() throws IOException {
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(root.resolve("collections"), Files::isDirectory)) {
            for (Path dir : dirs) {
                CollectionSpec spec = readSpec(dir.resolve("collection.meta"));
                collections.put(spec.name(), openCollection(dir, spec));
            }
        }
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
        try {
            Files.createDirectories(dir);
            writeSpec(dir.resolve("collection.meta"), spec);
            VectorCollection c = openCollection(dir, spec);
            collections.put(spec.name(), c);
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
    public synchronized VectorCollection collection(String name) {
        ensureOpen();
        VectorCollection c = collections.get(name);
        if (c == null) {
            throw new UnknownCollectionException(name, collections.keySet());
        }
        return c;
    }

    /** Specs of every collection, by name. */
    public synchronized List<CollectionSpec> collections() {
        ensureOpen();
        List<CollectionSpec> out = new ArrayList<>();
        collections.values().forEach(c -> out.add(c.spec()));
        return out;
    }

    /**
     * Drops a collection and deletes its files.
     *
     * @return false if no such collection existed
     */
    public synchronized boolean dropCollection(String name) {
        ensureOpen();
        VectorCollection c = collections.remove(name);
        if (c == null) {
            return false;
        }
        try {
            c.close();
            Path dir = root.resolve("collections").resolve(name);
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
            ChecksummedFiles.fsyncDirectory(root.resolve("collections"));
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException("dropping collection '" + name + "' failed", e);
        }
    }

    /** The store's folder. */
    public Path folder() {
        return root;
    }

    private VectorCollection openCollection(Path dir, CollectionSpec spec) throws IOException {
        VectorIndex index = VectorIndexes.factory(spec.index().kind()).create(indexConfig(spec));
        return new VectorCollection(spec, new RecordLogFile(dir.resolve("records.log")), index);
    }

    private static IndexConfig indexConfig(CollectionSpec spec) {
        return new IndexConfig(spec.dimension(), spec.metric(), spec.index().params(), INDEX_SEED);
    }

    private static void writeSpec(Path file, CollectionSpec spec) throws IOException {
        ChecksummedFiles.write(file, COLLECTION_FORMAT, COLLECTION_VERSION, ChecksummedFiles.newFileId(), out -> {
            out.writeUTF(spec.name());
            out.writeInt(spec.dimension());
            out.writeUTF(spec.metric().name());
            out.writeUTF(spec.index().kind());
            Map<String, String> params = new TreeMap<>(spec.index().params());
            out.writeInt(params.size());
            for (Map.Entry<String, String> e : params.entrySet()) {
                out.writeUTF(e.getKey());
                out.writeUTF(e.getValue());
            }
        });
    }

    private static CollectionSpec readSpec(Path file) throws IOException {
        return ChecksummedFiles.read(file, COLLECTION_FORMAT, COLLECTION_VERSION, COLLECTION_VERSION, (in, v) -> {
            String name = in.readUTF();
            int dim = in.readInt();
            Metric metric = Metric.valueOf(in.readUTF());
            String kind = in.readUTF();
            int n = in.readInt();
            Map<String, String> params = new HashMap<>();
            for (int i = 0; i < n; i++) {
                params.put(in.readUTF(), in.readUTF());
            }
            return new CollectionSpec(name, dim, metric, IndexSpec.of(kind, params));
        });
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
        IOException first = null;
        for (VectorCollection c : collections.values()) {
            try {
                c.close();
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
