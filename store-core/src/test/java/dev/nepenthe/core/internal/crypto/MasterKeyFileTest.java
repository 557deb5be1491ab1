package dev.nepenthe.core.internal.crypto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.internal.io.TestPoints;
import dev.nepenthe.testing.faults.FaultPlan;
import dev.nepenthe.testing.faults.FaultyFileSystem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The generated master key file: owner-only from its first byte, and never left half written. */
class MasterKeyFileTest {

    @TempDir Path dir;

    @Test
    void theKeyFileIsOwnerOnlyBeforeAnyByteOfTheKeyIsWritten() throws IOException {
        Path file = dir.resolve("keys").resolve("master.key");
        List<String> seen = new ArrayList<>();
        TestPoints points = new TestPoints();
        points.installCrashHook(
                point -> {
                    if (point.equals("master-key.created")) {
                        try {
                            // The file exists, still empty: whoever could open it now would read
                            // the key later. It is written beside the key file, which does not
                            // exist until the key is whole.
                            Path pending = file.resolveSibling("master.key.new");
                            seen.add(
                                    Files.size(pending)
                                            + " "
                                            + PosixFilePermissions.toString(
                                                    Files.getPosixFilePermissions(pending))
                                            + " "
                                            + Files.exists(file));
                        } catch (IOException e) {
                            throw new AssertionError(e);
                        }
                    }
                });
        MasterKey.resolve(file, true, points);
        assertEquals(List.of("0 rw------- false"), seen);
        assertFalse(Files.exists(file.resolveSibling("master.key.new")));
        assertEquals(
                "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    }

    @Test
    void aKeyWriteThatFailsLeavesNoHalfKeyForTheNextStart() throws IOException {
        FaultPlan plan = FaultPlan.none(3);
        Path file = FaultyFileSystem.wrap(dir.resolve("keys"), plan).resolve("master.key");
        plan.diskFullAfter(10); // the base64 key is 45 bytes
        IOException e = assertThrows(IOException.class, () -> MasterKey.resolve(file, true));
        assertTrue(e.getMessage().contains("No space left on device"), e.getMessage());
        assertFalse(
                Files.exists(file),
                "a half-written key would be read (and refused) at the next start");
        plan.heal();
        MasterKey.resolve(file, true);
        assertTrue(Files.exists(file));
    }

    @Test
    void aKeyFileACrashLeftHalfWrittenIsWrittenAgain() throws IOException {
        Path file = dir.resolve("keys").resolve("master.key");
        Files.createDirectories(file.getParent());
        // A crash while the key was written: the pending file, empty; no key file.
        Files.write(file.resolveSibling("master.key.new"), new byte[0]);
        MasterKey first = MasterKey.resolve(file, true);
        MasterKey again = MasterKey.resolve(file, false);
        assertEquals(
                HexFormat.of().formatHex(first.derive("check")),
                HexFormat.of().formatHex(again.derive("check")),
                "the key generated then is the one read back");
        assertFalse(Files.exists(file.resolveSibling("master.key.new")));
    }
}
