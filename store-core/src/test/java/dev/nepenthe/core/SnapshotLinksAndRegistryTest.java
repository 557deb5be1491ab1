package dev.nepenthe.core;

import static dev.nepenthe.testing.TestFiles.copyTree;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.internal.io.ForensicScan;
import dev.nepenthe.testing.Datasets;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots and restores against a careless or hostile hand on the file system (issue 47): a
 * symbolic link among the data files or inside a snapshot is refused, never copied as what it
 * points to; a snapshot path with a newline in it cannot forge a line of the snapshot registry
 * (oracle: a digest of every file of a copy the forged line names, unchanged by a forget that would
 * have rewritten it); registries written before the format changed still read; a damaged line is
 * reported, and no problem a tenant can read names a server path.
 */
class SnapshotLinksAndRegistryTest {

    @TempDir Path tmp;

    private static final int DIM = 8;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SECRET = "SECRET-NOT-FOR-SNAPSHOTS-91c2";

    private StoreOptions options() {
        return StoreOptions.defaults().withKeystore(tmp.resolve("keys"));
    }

    private Nepenthe open() throws IOException {
        return Nepenthe.open(tmp.resolve("data"), options());
    }

    /** Alice's 3 records and bob's 3. */
    private static VectorCollection populate(Nepenthe store) {
        VectorCollection c = store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            batch.add(
                    VectorRecord.builder("a" + i)
                            .subject("alice")
                            .vector(Datasets.gaussian(100 + i, DIM))
                            .build());
            batch.add(
                    VectorRecord.builder("b" + i)
                            .subject("bob")
                            .vector(Datasets.gaussian(200 + i, DIM))
                            .build());
        }
        c.upsertAll(batch);
        return c;
    }

    private static ForgetOperation forgetAlice(Nepenthe store) throws Exception {
        ForgetOperation done =
                store.awaitOperation(
                        store.forget(
                                        ForgetRequest.of(
                                                ForgetScope.subject("alice"),
                                                "req-a",
                                                "gdpr-art17"))
                                .id(),
                        WAIT);
        assertEquals(OperationState.SEALED, done.state(), done.note());
        return done;
    }

    private static SurfaceOutcome snapshots(ForgetOperation op) {
        return op.surfaces().stream()
                .filter(s -> s.surface().equals("snapshots"))
                .findFirst()
                .orElseThrow();
    }

    /** SHA-256 over every file under a folder, names and bytes, in path order. */
    private static String digest(Path dir) throws Exception {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                d.update(dir.relativize(f).toString().getBytes(StandardCharsets.UTF_8));
                d.update(Files.readAllBytes(f));
            }
        }
        return HexFormat.of().formatHex(d.digest());
    }

    @Test
    void aNewlineInASnapshotPathCannotForgeARegistryLine() throws Exception {
        Path victim = tmp.resolve("victim");
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            // A copy nobody registered, standing for another store's folder the forged line aims
            // at.
            Path plain = tmp.resolve("plain");
            store.snapshot(plain);
            copyTree(plain, victim);
            Files.writeString(tmp.resolve("keys").resolve("snapshots.registry"), "");
            String before = digest(victim);
            // The forged line, in the old format, with the collection's real id and every version.
            Path hostile =
                    tmp.resolve(
                            "snap\n"
                                    + victim
                                    + "\tnotes\t"
                                    + c.engine().id()
                                    + "\t"
                                    + Long.MAX_VALUE);
            store.snapshot(hostile);
            List<String> lines =
                    Files.readAllLines(tmp.resolve("keys").resolve("snapshots.registry"));
            assertEquals(1, lines.size(), "one collection, one line: " + lines);
            assertTrue(lines.get(0).startsWith("2\t"), lines.get(0));
            ForgetOperation done = forgetAlice(store);
            SurfaceOutcome snaps = snapshots(done);
            assertEquals(
                    1,
                    snaps.checked(),
                    "the hostile-named snapshot itself was purged and scanned: " + snaps);
            assertEquals(3, snaps.purged(), snaps.toString());
            assertTrue(snaps.clean(), snaps.toString());
            assertEquals(before, digest(victim), "the folder the forged line named is untouched");
            assertTrue(Files.isDirectory(hostile.resolve("collections").resolve("notes")));
        }
    }

    @Test
    void aRegistryWrittenInTheOldFormatStillReadsAndADamagedLineIsReportedWithoutAPath()
            throws Exception {
        Path snap = tmp.resolve("old-snap");
        Path registry = tmp.resolve("keys").resolve("snapshots.registry");
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            store.snapshot(snap);
            // The line as format 1 wrote it, and a format 2 line whose checksum no longer matches.
            String old =
                    snap.toAbsolutePath().normalize()
                            + "\tnotes\t"
                            + c.engine().id()
                            + "\t"
                            + Long.MAX_VALUE;
            String good = Files.readAllLines(registry).get(0);
            String damaged = good.replace("\tnotes\t", "\tnotez\t");
            Files.writeString(registry, old + "\n" + damaged + "\n");
            ForgetOperation done = forgetAlice(store);
            SurfaceOutcome snaps = snapshots(done);
            assertEquals(
                    1,
                    snaps.checked(),
                    "the old-format line still names a copy to purge: " + snaps);
            assertEquals(3, snaps.purged(), snaps.toString());
            assertNotNull(snaps.residual(), "the damaged line is reported");
            assertTrue(
                    snaps.residual().contains("1 lines of snapshots.registry do not read"),
                    snaps.residual());
            String said = snaps.toString() + done.note();
            assertFalse(
                    said.contains(tmp.toString()),
                    "no server path in what a tenant reads: " + said);
        }
        Path restored = tmp.resolve("restored");
        Nepenthe.restore(snap, restored);
        try (Nepenthe store = Nepenthe.open(restored, options())) {
            assertEquals(3, store.collection("notes").size(), "bob's three");
        }
    }

    @Test
    void aSnapshotRefusesALinkAmongTheDataFilesAndCopiesNothingOfItsTarget() throws Exception {
        Path secret = tmp.resolve("secret.txt");
        Files.writeString(secret, SECRET);
        try (Nepenthe store = open()) {
            populate(store);
            store.snapshot(
                    tmp.resolve(
                            "first")); // checkpoints: the segments the manifest names are on disk
            Path segments =
                    tmp.resolve("data").resolve("collections").resolve("notes").resolve("segments");
            Path segment;
            try (Stream<Path> s = Files.list(segments)) {
                segment = s.filter(Files::isRegularFile).findFirst().orElseThrow();
            }
            Files.delete(segment);
            Files.createSymbolicLink(segment, secret);
            Path target = tmp.resolve("second");
            IllegalStateException e =
                    assertThrows(IllegalStateException.class, () -> store.snapshot(target));
            assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
            assertEquals(
                    List.of(),
                    ForensicScan.filesContaining(
                            List.of(target), List.of(SECRET.getBytes(StandardCharsets.UTF_8))));
        }
    }

    @Test
    void aRestoreRefusesALinkInsideASnapshotBeforeCopyingAnything() throws Exception {
        Path secret = tmp.resolve("secret.txt");
        Files.writeString(secret, SECRET);
        Path snap = tmp.resolve("snap");
        try (Nepenthe store = open()) {
            populate(store);
            store.snapshot(snap);
        }
        Path notes = snap.resolve("collections").resolve("notes");
        Files.createSymbolicLink(notes.resolve("segments").resolve("planted"), secret);
        Path target = tmp.resolve("restored");
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> Nepenthe.restore(snap, target));
        assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
        assertFalse(Files.exists(target, LinkOption.NOFOLLOW_LINKS), "nothing was copied");
        // A link to a folder, where the collections folder should be, is refused too.
        Path snap2 = tmp.resolve("snap2");
        Files.createDirectories(snap2);
        Files.createSymbolicLink(snap2.resolve("collections"), snap.resolve("collections"));
        assertThrows(
                IllegalArgumentException.class,
                () -> Nepenthe.restore(snap2, tmp.resolve("restored2")));
        assertFalse(Files.exists(tmp.resolve("restored2")));
        // The control: without the link the same snapshot restores.
        Files.delete(notes.resolve("segments").resolve("planted"));
        Nepenthe.restore(snap, target);
        try (Nepenthe store = Nepenthe.open(target, options())) {
            assertEquals(6, store.collection("notes").size());
        }
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(
                        List.of(target), List.of(SECRET.getBytes(StandardCharsets.UTF_8))));
    }
}
