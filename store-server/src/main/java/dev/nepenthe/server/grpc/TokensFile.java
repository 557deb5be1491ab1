package dev.nepenthe.server.grpc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The tokens file as a running server sees it: read again whenever it changes, so an operator
 * revokes a token by deleting its line (or adds one with {@code nepenthe token}) without a restart,
 * and the revoked token is refused on its next call. Whether it changed is one {@code stat} per
 * call (inode, size, modification and change times), cheap beside a call's SHA-256.
 *
 * <p>Fails closed: a file that no longer reads (a typo while editing, permissions widened, the file
 * gone) refuses every call until it reads again, rather than keep serving the tokens of before, one
 * of which the edit may have been meant to revoke. The reason goes to the log, naming the file and
 * line, never a token.
 */
final class TokensFile {

    private static final System.Logger LOG = System.getLogger(TokensFile.class.getName());

    /** What was read for one version of the file: its tokens, or why it did not read. */
    private record Loaded(List<Object> stamp, Tokens tokens, String failure) {}

    private final Path file;
    private volatile Loaded loaded;

    /**
     * Reads the file once, now: a server does not start on a tokens file that does not read.
     *
     * @throws IllegalArgumentException if a line is malformed or the file is open to others
     */
    TokensFile(Path file) throws IOException {
        this.file = file;
        List<Object> stamp = stamp();
        this.loaded = new Loaded(stamp, Tokens.read(file), null);
    }

    /**
     * The tokens to check a call against, or empty when the file does not read (see {@link
     * #failure}).
     */
    Tokens current() {
        Loaded l = load();
        return l.tokens();
    }

    /** Why the file does not read now, or null. */
    String failure() {
        return load().failure();
    }

    private Loaded load() {
        List<Object> stamp;
        try {
            stamp = stamp();
        } catch (IOException e) {
            stamp = List.of("unreadable", String.valueOf(e.getClass().getSimpleName()));
        }
        Loaded l = loaded;
        if (l.stamp().equals(stamp)) {
            return l;
        }
        synchronized (this) {
            l = loaded;
            if (l.stamp().equals(stamp)) {
                return l;
            }
            try {
                l = new Loaded(stamp, Tokens.read(file), null);
                LOG.log(
                        System.Logger.Level.INFO,
                        "tokens file {0} changed: read again, {1} tokens",
                        file,
                        l.tokens().size());
            } catch (IOException | RuntimeException e) {
                String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
                l = new Loaded(stamp, null, why);
                LOG.log(
                        System.Logger.Level.ERROR,
                        "tokens file {0} does not read; refusing every call until it does: {1}",
                        file,
                        why);
            }
            loaded = l;
            return l;
        }
    }

    /** What identifies a version of the file; unix attributes where the file system has them. */
    private List<Object> stamp() throws IOException {
        try {
            Map<String, Object> a =
                    Files.readAttributes(file, "unix:dev,ino,size,lastModifiedTime,ctime,mode");
            return List.of(
                    Objects.toString(a.get("dev")),
                    Objects.toString(a.get("ino")),
                    Objects.toString(a.get("size")),
                    Objects.toString(a.get("lastModifiedTime")),
                    Objects.toString(a.get("ctime")),
                    Objects.toString(a.get("mode")));
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            BasicFileAttributes b = Files.readAttributes(file, BasicFileAttributes.class);
            return List.of(
                    Objects.toString(b.fileKey()), b.size(), b.lastModifiedTime().toString());
        }
    }
}
