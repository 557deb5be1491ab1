package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.nepenthe.core.internal.crypto.MasterKey;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which files a replica copy carries and which it refuses: the master key, locks, id maps and the
 * sender's snapshots stay behind, a store opened with another master key is refused before it reads
 * a collection, a symbolic link is never followed.
 */
class ReplicaCopyFilesTest {

    @TempDir Path tmp;

    static final int DIM = ReplicaCopyTest.DIM;

    private static Path keyFile(Path dir, String name, long seed) throws IOException {
        return ReplicaCopyTest.keyFile(dir, name, seed);
    }

    private static StoreOptions options(Path keys, Path keyFile) {
        return ReplicaCopyTest.options(keys, keyFile);
    }

    private static float[] vector(Random r) {
        return ReplicaCopyTest.vector(r);
    }

    private static byte[] copyOf(Nepenthe store) throws IOException {
        return ReplicaCopyTest.copyOf(store);
    }

    private void receive(byte[] image, String name) throws IOException {
        ReplicaCopy.read(
                new ByteArrayInputStream(image),
                tmp.resolve(name).resolve("store"),
                tmp.resolve(name).resolve("keys"));
    }

    private Nepenthe openReceived(String name, Path keyFile) throws IOException {
        return Nepenthe.open(
                tmp.resolve(name).resolve("store"),
                options(tmp.resolve(name).resolve("keys"), keyFile));
    }

    // ---- (e) another master key ---------------------------------------------------------------

    @Test
    void aReplicaOpenedWithAnotherMasterKeyFailsLoudlyAndLeavesTheCopyIntact() throws Exception {
        assumeTrue(
                System.getenv(MasterKey.ENV) == null,
                MasterKey.ENV + " is set: it would override both key files");
        Path key = keyFile(tmp, "group.key", 4);
        Path other = keyFile(tmp, "other.key", 5);
        Random r = new Random(3);
        List<VectorRecord> records = new ArrayList<>();
        byte[] image;
        try (Nepenthe store =
                Nepenthe.open(tmp.resolve("leader"), options(tmp.resolve("lk"), key))) {
            VectorCollection c =
                    store.createCollection(
                            CollectionSpec.of("notes", DIM, Metric.COSINE)
                                    .withTextIndex("standard"));
            for (int i = 0; i < 30; i++) {
                VectorRecord rec =
                        VectorRecord.builder("x" + i)
                                .subject("s" + i % 5)
                                .vector(vector(r))
                                .text("text " + i)
                                .build();
                records.add(rec);
                c.upsert(rec);
                if (i == 19) {
                    c.checkpoint(); // some in segments, the rest in the log
                }
            }
            image = copyOf(store);
        }
        receive(image, "replica");
        IOException e = assertThrows(IOException.class, () -> openReceived("replica", other));
        assertTrue(e.getMessage().contains("wrong master key"), e.getMessage());
        // The refused open changed nothing: with the group's key every record is there.
        try (Nepenthe copy = openReceived("replica", key)) {
            VectorCollection c = copy.collection("notes");
            assertEquals(records.size(), c.size());
            for (VectorRecord rec : records) {
                assertEquals(rec, c.get(rec.id()).orElseThrow());
            }
        }
    }

    // ---- what an image leaves out, and what it refuses ----------------------------------------

    @Test
    void theImageLeavesOutLocksIdMapsMasterKeyAndTheSendersSnapshots() throws Exception {
        Path leader = tmp.resolve("leader");
        Path keys = tmp.resolve("lk");
        byte[] image;
        // The embedded default: a master key generated inside the keystore folder.
        try (Nepenthe store = Nepenthe.open(leader, StoreOptions.defaults().withKeystore(keys))) {
            store.createCollection(
                            CollectionSpec.of("notes", DIM, Metric.COSINE)
                                    .withTextIndex("standard"))
                    .upsert(
                            VectorRecord.builder("x")
                                    .text("hello")
                                    .vector(vector(new Random(1)))
                                    .build());
            store.snapshot(tmp.resolve("snap"));
            assertTrue(Files.exists(keys.resolve("snapshots.registry")));
            assertTrue(Files.exists(keys.resolve("master.key")));
            image = copyOf(store);
        }
        receive(image, "replica");
        List<String> names;
        try (Stream<Path> all =
                Stream.concat(
                        Files.walk(tmp.resolve("replica/store")),
                        Files.walk(tmp.resolve("replica/keys")))) {
            names = all.map(p -> p.getFileName().toString()).toList();
        }
        for (String absent :
                List.of(
                        "master.key",
                        "store.lock",
                        "write.lock",
                        "idmap.cmap",
                        "snapshots.registry",
                        "reconciled.stamp")) {
            assertFalse(names.contains(absent), absent + " in " + names);
        }
        for (String present : List.of("keys.db", "ledger.bin", "signing.key", "collection.meta")) {
            assertTrue(names.contains(present), present + " missing from " + names);
        }
        try (Nepenthe copy = openReceived("replica", keys.resolve("master.key"))) {
            assertEquals("hello", copy.collection("notes").get("x").orElseThrow().text());
        }
    }

    @Test
    void aDataFolderKeptInsideTheKeystoreFolderTravelsOnceAsData() throws Exception {
        Path key = keyFile(tmp, "group.key", 8);
        Path keys = tmp.resolve("lk");
        VectorRecord rec = VectorRecord.builder("x").vector(vector(new Random(8))).build();
        byte[] image;
        try (Nepenthe store = Nepenthe.open(keys.resolve("data"), options(keys, key))) {
            store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE)).upsert(rec);
            image = copyOf(store);
        }
        receive(image, "replica");
        assertFalse(Files.exists(tmp.resolve("replica/keys/data")), "data sent as keys");
        try (Nepenthe copy = openReceived("replica", key)) {
            assertEquals(rec, copy.collection("notes").get("x").orElseThrow());
        }
    }

    @Test
    void aSymbolicLinkInTheStoreIsRefusedNotFollowed() throws Exception {
        Path key = keyFile(tmp, "group.key", 6);
        Path outside = Files.writeString(tmp.resolve("outside.txt"), "not the store's");
        try (Nepenthe store =
                Nepenthe.open(tmp.resolve("leader"), options(tmp.resolve("lk"), key))) {
            store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
            Path link = tmp.resolve("leader/collections/notes/link.bin");
            Files.createSymbolicLink(link, outside);
            IOException e = assertThrows(IOException.class, () -> copyOf(store));
            assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
            Files.delete(link);
            copyOf(store); // the store still copies, and writes again
            store.collection("notes")
                    .upsert(VectorRecord.builder("y").vector(vector(new Random(2))).build());
        }
    }
}
