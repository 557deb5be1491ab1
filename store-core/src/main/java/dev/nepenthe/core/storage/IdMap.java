package dev.nepenthe.core.storage;

import dev.nepenthe.core.crypto.KeyedHash;
import java.io.Closeable;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.openhft.chronicle.map.ChronicleMap;

/**
 * Persistent, off-heap map from a record's keyed hash (tenant and id) to its ordinal, on
 * Chronicle Map.
 *
 * <p>Chronicle Map leaves a removed entry's bytes in its file, so nothing here is subject data:
 * keys are keyed hashes, values ordinals. The map is derived from the segments: it is checked
 * against them at every open and rebuilt from scratch (a new file) when a subject is forgotten,
 * so even the hashes of forgotten records leave the file.
 */
final class IdMap implements Closeable {

    private static final byte[] KEY_SAMPLE = new byte[KeyedHash.LENGTH];
    private static final System.Logger LOG = System.getLogger(IdMap.class.getName());

    private final Path file;
    private long capacity;
    private ChronicleMap<byte[], Long> map;
    /** Whether the first open found the file not closed cleanly (or unreadable) and started afresh. */
    private boolean rebuiltAtOpen;

    IdMap(Path file, long capacity) throws IOException {
        this.file = file;
        this.capacity = capacity;
        this.map = open();
    }

    boolean rebuiltAtOpen() {
        return rebuiltAtOpen;
    }

    private ChronicleMap<byte[], Long> open() throws IOException {
        var builder = builder(capacity);
        Path closedMarker = closedMarker();
        boolean cleanlyClosed = Files.exists(closedMarker);
        Files.deleteIfExists(closedMarker);
        Files.deleteIfExists(file.resolveSibling(file.getFileName() + ".grow")); // a copy a crash cut short
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
            LOG.log(Level.WARNING, "{0}: id map unreadable ({1}); rebuilding it from the segments", file, e.toString());
            Files.deleteIfExists(file);
            rebuiltAtOpen = true;
            return builder.createPersistedTo(file.toFile());
        }
    }

    private static net.openhft.chronicle.map.ChronicleMapBuilder<byte[], Long> builder(long entries) {
        return ChronicleMap.of(byte[].class, Long.class)
                .name("nepenthe-idmap")
                .constantKeySizeBySample(KEY_SAMPLE)
                .entries(entries)
                // Tolerates some growth past the declared size; put() moves to a larger file
                // long before this runs out.
                .maxBloatFactor(4);
    }

    /** Present only between a clean close and the next open. */
    private Path closedMarker() {
        return file.resolveSibling(file.getFileName() + ".closed");
    }

    int get(KeyedHash.Hash record) {
        Long v = map.get(record.bytes());
        return v == null ? -1 : (int) (long) v;
    }

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
        Path tmp = file.resolveSibling(file.getFileName() + ".grow");
        try {
            Files.deleteIfExists(tmp);
            try (ChronicleMap<byte[], Long> next = builder(bigger).createPersistedTo(tmp.toFile())) {
                map.forEach(next::put);
            }
            map.close();
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            capacity = bigger;
            // Opening an intact file that was closed: mark it so, or open() would run recovery.
            Files.createFile(closedMarker());
            map = open();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("growing the id map " + file + " failed", e);
        }
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
        if (freshFile) {
            map.close();
            Files.deleteIfExists(file);
            Files.deleteIfExists(closedMarker());
            map = open();
        }
        int changed = 0;
        List<byte[]> stale = new ArrayList<>();
        for (byte[] k : map.keySet()) {
            if (!live.containsKey(new KeyedHash.Hash(k))) {
                stale.add(k);
            }
        }
        for (byte[] k : stale) {
            map.remove(k);
            changed++;
        }
        for (Map.Entry<KeyedHash.Hash, Integer> e : live.entrySet()) {
            Long v = map.get(e.getKey().bytes());
            if (v == null || v != (long) e.getValue()) {
                map.put(e.getKey().bytes(), (long) e.getValue());
                changed++;
            }
        }
        return changed;
    }

    @Override
    public void close() throws IOException {
        map.close();
        Files.createFile(closedMarker());
    }
}
