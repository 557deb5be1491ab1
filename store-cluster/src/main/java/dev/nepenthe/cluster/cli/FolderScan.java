package dev.nepenthe.cluster.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Every file under a folder searched, byte by byte, for any of some byte strings: how the demo
 * shows that a forgotten vector is gone from a replica's files (Raft log, journal, store), not only
 * from its answers. A file removed while the scan runs (a segment rolled) is skipped.
 */
final class FolderScan {

    private FolderScan() {}

    /** The files under {@code root} that hold any of {@code needles}. */
    static List<Path> holding(Path root, List<byte[]> needles) throws IOException {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(root)) {
            return out;
        }
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(Files::isRegularFile).toList();
        }
        for (Path f : files) {
            byte[] bytes;
            try (InputStream in = Files.newInputStream(f)) {
                bytes = in.readAllBytes();
            } catch (NoSuchFileException e) {
                continue;
            }
            for (byte[] n : needles) {
                if (indexOf(bytes, n) >= 0) {
                    out.add(f);
                    break;
                }
            }
        }
        return out;
    }

    static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
