package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The snapshot folders a server starts with (issue 47): none may hold or lie in the data or
 * keystore folder, even through a link; a folder given through a link is judged by its real path;
 * with none, a path is refused naming the option.
 */
class SnapshotFoldersTest {

    @TempDir Path tmp;

    @Test
    void aSnapshotFolderOverlappingTheDataOrTheKeysIsRefusedAtStart() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path keys = Files.createDirectories(tmp.resolve("keys"));
        Files.createSymbolicLink(tmp.resolve("into-keys"), keys);
        for (Path bad :
                List.of(
                        data.resolve("snaps"),
                        keys.resolve("snaps"),
                        tmp,
                        tmp.resolve("into-keys").resolve("s"))) {
            String m =
                    assertThrows(
                                    IllegalArgumentException.class,
                                    () -> SnapshotFolders.of(List.of(bad), data, keys))
                            .getMessage();
            assertTrue(
                    m.contains("--snapshot-dir") && m.contains("expected a folder apart from"), m);
        }
        // The control: a folder beside them is taken, by its real path when given through a link.
        Files.createDirectories(tmp.resolve("real-snaps"));
        Files.createSymbolicLink(tmp.resolve("snaps"), tmp.resolve("real-snaps"));
        SnapshotFolders ok = SnapshotFolders.of(List.of(tmp.resolve("snaps")), data, keys);
        assertEquals(List.of(tmp.resolve("real-snaps").toRealPath()), ok.roots());
        assertEquals(
                tmp.resolve("real-snaps").toRealPath().resolve("s1"),
                ok.newFolder(tmp.resolve("snaps").resolve("s1").toString(), "target"));
    }

    @Test
    void withoutSnapshotFoldersEveryPathIsRefusedNamingTheOption() {
        StatusRuntimeException e =
                assertThrows(
                        StatusRuntimeException.class,
                        () ->
                                SnapshotFolders.none()
                                        .newFolder(tmp.resolve("s").toString(), "target"));
        assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
        assertTrue(
                e.getStatus().getDescription().contains("--snapshot-dir"),
                e.getStatus().getDescription());
    }
}
