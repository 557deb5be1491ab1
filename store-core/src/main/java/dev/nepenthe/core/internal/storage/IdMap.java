package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.IoErrors;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import net.openhft.chronicle.map.ChronicleMap;
import net.openhft.chronicle.map.ChronicleMapBuilder;

/**
 * Persistent, off-heap map from a record's keyed hash (tenant and id) to its ordinal, on Chronicle
 * Map.
 *
 * <p>Chronicle Map leaves a removed entry's bytes in its file, so nothing here is subject data:
 * keys are keyed hashes, values ordinals. The map is derived from the segments: it is checked
 * against them at every open and rebuilt from scratch (a new file) when a subject is forgotten, so
 * even the hashes of forgotten records leave the file.
 */
final class IdMap implements Closeable {

    private static final byte[] KEY_SAMPLE = new byte[KeyedHash.LENGTH];
    private static final System.Logger LOG = System.getLogger(IdMap.class.getName());

    private final Path file;
    private long capacity;
    private volatile ChronicleMap<byte[], Long> map;
    private final ReentrantReadWriteLock swap = new ReentrantReadWriteLock();

    /**
     * Whether the first open found the file not closed cleanly (or unreadable) and started afresh.
     */
    private boolean rebuiltAtOpen;

    /** Replacement files made so far, for their unique names. */
    private int replacements;

    /** What the last clean close wrote into its marker (see {@link #close(byte[])}), or null. */
    private byte[] closedWith;

    IdMap(Path file, long capacity) throws IOException {
        this.file = file;
        this.capacity = capacity;
        awaitWarmUp();
        this.map = open();
    }

    /**
     * The first Chronicle Map a JVM builds generates and compiles classes for its key and value
     * types, which takes seconds where the next map takes a blink (docs/BENCHMARKS.md, Chronicle
     * Map's warm-up), and a restart paid it on the open's path, after the records. Started when a
     * store (or a collection's storage) starts opening, it runs beside the records' decryption. It
     * builds a map in memory of the id map's own types, holding one all-zero key.
     */
    private static final FutureTask<Void> WARM_UP =
            new FutureTask<>(
                    () -> {
                        try (ChronicleMap<byte[], Long> m = builder(16).create()) {
                            m.put(KEY_SAMPLE.clone(), 0L);
                        }
                        return null;
                    });

    private static final AtomicBoolean WARM_UP_STARTED = new AtomicBoolean();

    /** Starts {@link #WARM_UP} on a thread of its own, once per JVM. */
    static void warmUpInBackground() {
        if (WARM_UP_STARTED.compareAndSet(false, true)) {
            Thread.ofPlatform().name("nepenthe-idmap-warm-up").daemon().start(WARM_UP);
        }
    }

    /**
     * Waits for a started warm-up, so that it and this map never generate the same classes at once.
     * Not cut short by an interrupt (the flag is set again after); a warm-up that failed leaves the
     * work to this map's own build.
     */
    private static void awaitWarmUp() {
        if (!WARM_UP_STARTED.get()) {
            return;
        }
        boolean interrupted = false;
        while (true) {
            try {
                WARM_UP.get();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException e) {
                LOG.log(
                        Level.DEBUG,
                        "Chronicle Map warm-up failed; the id map builds its classes itself: {0}",
                        e.getCause().toString());
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    boolean rebuiltAtOpen() {
        return rebuiltAtOpen;
    }

    /**
     * The stamp the last clean close was given (the storage's identity of the files the map agreed
     * with then), or null: none given, not closed cleanly, rebuilt at this open, or the map's file
     * is not byte for byte the one that close left (its digest is in the marker too).
     */
    byte[] closedWith() {
        return rebuiltAtOpen ? null : closedWith;
    }

    /**
     * What a clean close stamps the map with: the digest of the storage's manifest (unique per
     * write: it carries a fresh file id) and the live count. The next open trusts the map only if
     * its own manifest and count give the same stamp.
     */
    static byte[] closeStamp(byte[] manifestDigest, int liveRecords) {
        return ByteBuffer.allocate(manifestDigest.length + 4)
                .put(manifestDigest)
                .putInt(liveRecords)
                .array();
    }

    private ChronicleMap<byte[], Long> open() throws IOException {
        var builder = builder(capacity);
        Path closedMarker = closedMarker();
        boolean cleanlyClosed = Files.exists(closedMarker);
        if (cleanlyClosed) {
            byte[] marker = IoErrors.readAllBytes(closedMarker);
            // The marker ends with the digest of the file the close left; a file changed since
            // (a flipped byte, another copy) is not vouched for. Read before Chronicle maps it.
            if (marker.length > DIGEST_BYTES && Files.exists(file)) {
                byte[] stamp = Arrays.copyOf(marker, marker.length - DIGEST_BYTES);
                byte[] digest =
                        Arrays.copyOfRange(marker, marker.length - DIGEST_BYTES, marker.length);
                if (Arrays.equals(digest, digestOf(file))) {
                    closedWith = stamp;
                }
            }
            Files.delete(closedMarker);
            // Gone for good before the map changes: a crash from here on must not find the marker.
            ChecksummedFiles.fsyncDirectory(file.toAbsolutePath().getParent());
        }
        // Copies a crash cut short (a replacement is moved over the map only once complete).
        try (var leftovers =
                Files.newDirectoryStream(file.getParent(), file.getFileName() + ".grow*")) {
            for (Path p : leftovers) {
                Files.delete(p);
            }
        }
        if (Files.exists(file) && !cleanlyClosed) {
            // Not closed cleanly: the process was killed, perhaps while holding one of the map's
            // segment locks (the next access would wait for it forever) or while creating the
            // file (Chronicle's recovery then waits minutes for a header that never completes).
            // The map is derived from the segments and reconciled against them after every open,
            // so a new file loses nothing: start one instead of recovering.
            LOG.log(Level.INFO, "{0}: not closed cleanly; rebuilding it from the segments", file);
            Files.delete(file);
            rebuiltAtOpen = true;
        }
        try {
            return builder.createPersistedTo(file.toFile());
        } catch (IOException | RuntimeException e) {
            // A clean-close marker over a file that still does not open: rebuild it the same way.
            LOG.log(
                    Level.WARNING,
                    "{0}: id map unreadable ({1}); rebuilding it from the segments",
                    file,
                    e.toString());
            Files.deleteIfExists(file);
            rebuiltAtOpen = true;
            return builder.createPersistedTo(file.toFile());
        }
    }

    private static ChronicleMapBuilder<byte[], Long> builder(long entries) {
        return ChronicleMap.of(byte[].class, Long.class)
                .name("nepenthe-idmap")
                .constantKeySizeBySample(KEY_SAMPLE)
                .entries(entries)
                // The store closes its maps itself (Nepenthe.close; a server's shutdown does it
                // after
                // the calls in flight finish). Chronicle's own close-on-exit hook would run beside
                // that at SIGTERM and close the map under those calls, failing them ("map closed");
                // a JVM that exits without closing the store is a crash, which the next open
                // repairs.
                .skipCloseOnExitHook(true)
                // Tolerates some growth past the declared size; put() moves to a larger file
                // long before this runs out.
                .maxBloatFactor(4);
    }

    private static final int DIGEST_BYTES = 32;

    /** SHA-256 of a file's bytes, streamed. */
    private static byte[] digestOf(Path f) throws IOException {
        try (InputStream in = Files.newInputStream(f)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
            return md.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Present only between a clean close and the next open. */
    private Path closedMarker() {
        return file.resolveSibling(file.getFileName() + ".closed");
    }

    /**
     * Lock-free for readers in all but name: the read side of {@link #swap} only keeps a lookup off
     * a map that is being replaced and closed (a closed Chronicle Map must not be touched); the
     * write side is held for the reference swap alone, never while a file is built.
     */
    int get(KeyedHash.Hash record) {
        swap.readLock().lock();
        try {
            Long v = map.get(record.bytes());
            return v == null ? -1 : (int) (long) v;
        } finally {
            swap.readLock().unlock();
        }
    }

    /** Writers (the collection's writer mutex) call this and {@link #remove} one at a time. */
    void put(KeyedHash.Hash record, int ordinal) {
        if (map.size() >= capacity) {
            grow();
        }
        map.put(record.bytes(), (long) ordinal);
    }

    /**
     * A Chronicle Map cannot grow past a multiple of the size it was created for, so a map that
     * fills up is copied into a file four times the size, which then replaces it. Amortised over
     * the inserts that filled it, the copy costs a few puts per insert. A crash midway leaves
     * either file, both valid (and the map is reconciled against the segments at every open).
     */
    private void grow() {
        long bigger = Math.max(1024, capacity * 4);
        replaceWith(bigger, next -> map.forEach(next::put));
    }

    /**
     * Builds a new map file beside the current one, fills it, moves it over the current file and
     * swaps it in; lookups use the old map until the swap and the new one after it.
     */
    private void replaceWith(long newCapacity, Consumer<ChronicleMap<byte[], Long>> fill) {
        // A fresh name each time: Chronicle Map refuses to map a second file under a path it
        // still has open in this process (it hands back the open map instead).
        replacements++;
        Path tmp = file.resolveSibling(file.getFileName() + ".grow-" + replacements);
        ChronicleMap<byte[], Long> next = null;
        try {
            Files.deleteIfExists(tmp);
            next = builder(newCapacity).createPersistedTo(tmp.toFile());
            fill.accept(next);
            // The new map stays open and serves as it is; only its name changes.
            Files.move(
                    tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            if (next != null) {
                next.close();
            }
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e instanceof IOException io
                    ? new UncheckedIOException("replacing the id map " + file + " failed", io)
                    : (RuntimeException) e;
        }
        capacity = newCapacity;
        ChronicleMap<byte[], Long> old;
        swap.writeLock().lock();
        try {
            old = map;
            map = next;
        } finally {
            swap.writeLock().unlock();
        }
        // The old file is already unlinked; closing unmaps its last bytes.
        old.close();
    }

    void remove(KeyedHash.Hash record) {
        map.remove(record.bytes());
    }

    int size() {
        return map.size();
    }

    /**
     * Makes the map hold exactly {@code live}. With {@code freshFile}, the file is deleted and
     * recreated first, so no removed entry's bytes survive in it.
     *
     * @return how many entries had to change (0 when the map already agreed)
     */
    int reconcile(Map<KeyedHash.Hash, Integer> live, boolean freshFile) throws IOException {
        List<byte[]> stale = new ArrayList<>();
        for (byte[] k : map.keySet()) {
            if (!live.containsKey(new KeyedHash.Hash(k))) {
                stale.add(k);
            }
        }
        List<Map.Entry<KeyedHash.Hash, Integer>> wrong = new ArrayList<>();
        for (Map.Entry<KeyedHash.Hash, Integer> e : live.entrySet()) {
            Long v = map.get(e.getKey().bytes());
            if (v == null || v != (long) e.getValue()) {
                wrong.add(e);
            }
        }
        if (freshFile) {
            // A new file holding exactly the live entries, swapped in whole: lookups meanwhile
            // still see the old (complete) map, never a half-filled one.
            long cap = Math.max(capacity, Math.max(1024, live.size() * 2L));
            try {
                replaceWith(cap, next -> live.forEach((k, v) -> next.put(k.bytes(), (long) v)));
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
        } else {
            stale.forEach(map::remove);
            wrong.forEach(e -> put(e.getKey(), e.getValue()));
        }
        return stale.size() + wrong.size();
    }

    @Override
    public void close() throws IOException {
        close(new byte[0]);
    }

    /**
     * Closes the map and marks it closed cleanly with {@code stamp}: the storage's identity of the
     * files the map agrees with now, which the next open compares to decide whether the map can be
     * trusted without a check. The map's file is forced to disk before the marker is written, so a
     * marker that survives a crash vouches for a map that did too.
     */
    void close(byte[] stamp) throws IOException {
        swap.writeLock().lock();
        try {
            map.close();
        } finally {
            swap.writeLock().unlock();
        }
        byte[] content = stamp;
        if (stamp.length > 0) {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            content = Arrays.copyOf(stamp, stamp.length + DIGEST_BYTES);
            System.arraycopy(digestOf(file), 0, content, stamp.length, DIGEST_BYTES);
        }
        Path marker = closedMarker();
        Files.write(marker, content);
        if (stamp.length > 0) {
            try (FileChannel ch = FileChannel.open(marker, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            ChecksummedFiles.fsyncDirectory(file.toAbsolutePath().getParent());
        }
    }
}
