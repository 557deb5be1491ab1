package dev.nepenthe.core.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.testing.faults.FaultPlan;
import dev.nepenthe.testing.faults.FaultyFileSystem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file write under faults: nothing is reported written that is not, and errors name the file. */
class ChecksummedFilesFaultTest {

    @TempDir Path tmp;

    private static final byte[] ID = new byte[16];

    private static byte[] read(Path f) throws IOException {
        return ChecksummedFiles.read(f, "test", 1, 1, (in, v) -> in.readAllBytes());
    }

    private static void write(Path f, byte[] body) throws IOException {
        ChecksummedFiles.write(f, "test", 1, ID, out -> out.write(body));
    }

    @Test
    void aFailedDirectoryFsyncIsAnErrorNamingTheFolder() throws IOException {
        FaultPlan plan = FaultPlan.none(1);
        Path dir = FaultyFileSystem.wrap(tmp.resolve("d"), plan);
        Files.createDirectories(dir);
        plan.failNth(FaultPlan.Op.DIRECTORY_FSYNC, 1, false);
        IOException e =
                assertThrows(
                        IOException.class, () -> write(dir.resolve("f"), new byte[] {1, 2, 3}));
        assertTrue(
                e.getMessage().contains(FaultyFileSystem.realPath(dir).toString()), e.getMessage());
        assertEquals(1, plan.injectedCount());
    }

    @Test
    void aFailedFileFsyncOrRenameLeavesTheOldFileAndNoTemporary() throws IOException {
        for (FaultPlan.Op op :
                new FaultPlan.Op[] {FaultPlan.Op.FSYNC, FaultPlan.Op.RENAME, FaultPlan.Op.WRITE}) {
            FaultPlan plan = FaultPlan.none(2);
            Path dir = FaultyFileSystem.wrap(tmp.resolve(op.name()), plan);
            Files.createDirectories(dir);
            Path f = dir.resolve("f");
            write(f, new byte[] {1});
            plan.failNth(op, 1, false);
            IOException e =
                    assertThrows(IOException.class, () -> write(f, new byte[] {2, 2}), op.name());
            assertTrue(
                    e.getMessage().contains(FaultyFileSystem.realPath(dir).toString()),
                    op + ": " + e.getMessage());
            assertArrayEquals(new byte[] {1}, read(f), op + ": the old file stands");
            assertFalse(Files.exists(dir.resolve("f.tmp")), op + ": no temporary left");
        }
    }

    @Test
    void aFullDiskAndShortWritesNeverYieldATornFile() throws IOException {
        byte[] body = new byte[200_000];
        new java.util.Random(4).nextBytes(body);
        for (long budget : new long[] {1, 5_000, 150_000}) {
            FaultPlan plan = FaultPlan.none(budget);
            Path dir = FaultyFileSystem.wrap(tmp.resolve("full-" + budget), plan);
            Files.createDirectories(dir);
            plan.shortWrites(0.5).diskFullAfter(budget);
            assertThrows(IOException.class, () -> write(dir.resolve("f"), body));
            assertFalse(Files.exists(dir.resolve("f")));
            plan.heal();
            plan.shortWrites(0.5);
            write(dir.resolve("f"), body);
            assertArrayEquals(body, read(dir.resolve("f")), "short writes are written whole");
        }
    }
}
