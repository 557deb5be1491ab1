package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The snapshots this store wrote, so that a forget can purge its records from them too (the
 * "snapshots" surface). One line per collection copy in {@code snapshots.registry} in the
 * keystore folder: the snapshot folder, the collection's name and incarnation id, and the
 * version below which the copy holds every record. Paths and versions only, nothing of anyone.
 */
final class SnapshotRegistry {

    private record RegisteredSnapshot(Path folder, String collection, String collectionId, long nextVersion) {}

    private final Path file;
    private final KeyedHash hashes;

    SnapshotRegistry(Path file, KeyedHash hashes) {
        this.file = file;
        this.hashes = hashes;
    }

    void register(Path target, CollectionEngine c) throws IOException {
        String line = target.toAbsolutePath().normalize() + "\t" + c.name() + "\t" + c.id() + "\t" + c.nextVersion() + "\n";
        synchronized (this) {
            Files.writeString(file, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                    StandardOpenOption.SYNC);
        }
    }

    private synchronized List<RegisteredSnapshot> registered() throws IOException {
        if (!Files.exists(file)) {
            return List.of();
        }
        List<RegisteredSnapshot> out = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String[] f = line.split("\t");
            if (f.length == 4) {
                out.add(new RegisteredSnapshot(Path.of(f[0]), f[1], f[2], Long.parseLong(f[3])));
            }
        }
        return out;
    }

    /** The registered copies of live collections that may hold a removed record, with the records' keyed hashes. */
    private Map<Path, Set<KeyedHash.Hash>> targets(String tenant, List<OperationSecret.Forgotten> removed,
            List<CollectionEngine> collections) throws IOException {
        Map<String, CollectionEngine> live = new HashMap<>();
        collections.forEach(c -> live.put(c.name(), c));
        Map<Path, Set<KeyedHash.Hash>> targets = new LinkedHashMap<>();
        for (RegisteredSnapshot s : registered()) {
            CollectionEngine c = live.get(s.collection());
            if (c == null || !c.id().equals(s.collectionId())) {
                continue;
            }
            Path dir = s.folder().resolve("collections").resolve(s.collection());
            for (OperationSecret.Forgotten f : removed) {
                if (f.collection().equals(s.collection()) && f.removed().version() < s.nextVersion()) {
                    targets.computeIfAbsent(dir, k -> new HashSet<>()).add(hashes.record(tenant, f.removed().record().id()));
                }
            }
        }
        return targets;
    }

    /** Rewrites every registered copy that holds a removed record without it; returns how many were removed. */
    int purge(String tenant, List<OperationSecret.Forgotten> removed, List<CollectionEngine> collections)
            throws IOException {
        int n = 0;
        for (Map.Entry<Path, Set<KeyedHash.Hash>> t : targets(tenant, removed, collections).entrySet()) {
            if (Files.isDirectory(t.getKey())) {
                n += CollectionStorage.purgeSnapshotCopy(t.getKey(), t.getValue());
            }
        }
        return n;
    }

    /** A byte scan of every registered copy that held a removed record. */
    SurfaceOutcome verify(String tenant, List<OperationSecret.Forgotten> removed, List<CollectionEngine> collections,
            long purged) throws IOException {
        List<String> problems = new ArrayList<>();
        int scanned = 0;
        int missing = 0;
        for (Map.Entry<Path, Set<KeyedHash.Hash>> t : targets(tenant, removed, collections).entrySet()) {
            if (!Files.isDirectory(t.getKey())) {
                missing++;
                continue;
            }
            scanned++;
            long found = CollectionStorage.scanSnapshotCopy(t.getKey(),
                    t.getValue().stream().map(KeyedHash.Hash::bytes).toList());
            if (found > 0) {
                problems.add(found + " copies of forgotten records in snapshot " + t.getKey());
            }
        }
        String residual = missing == 0 ? null
                : missing + " registered snapshot copies are no longer where they were written (moved or deleted);"
                        + " if restored, the tombstone journal drops the forgotten records before serving";
        return new SurfaceOutcome("snapshots", ErasureClass.PHYSICAL, purged, scanned, problems, residual);
    }
}
