package dev.nepenthe.core.internal.crypto;

import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.io.IoErrors;
import dev.nepenthe.core.internal.io.TestPoints;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The store's root secret (32 bytes). It wraps every subject's data key and keys the hashes that
 * stand in for tenant, subject and record ids on disk. It never enters the data folder.
 *
 * <p>Sources, first match wins: the environment variable {@value #ENV} (base64 of 32 bytes), an
 * explicit key file, or a key file generated on first start inside the keystore folder (the
 * embedded default; a warning says so, because a key kept beside the keystore protects against a
 * stolen data folder or backup, not against a stolen keystore folder).
 */
public final class MasterKey {

    public static final String ENV = "NEPENTHE_MASTER_KEY";
    public static final int LENGTH = 32;
    private static final System.Logger LOG = System.getLogger(MasterKey.class.getName());

    private final byte[] key;

    private MasterKey(byte[] key) {
        if (key.length != LENGTH) {
            throw new IllegalArgumentException(
                    "master key: expected " + LENGTH + " bytes, got " + key.length);
        }
        this.key = key.clone();
    }

    public static MasterKey of(byte[] key) {
        return new MasterKey(key);
    }

    /**
     * The key from {@value #ENV} if set, else from {@code file}; if neither exists and {@code
     * generateIfMissing}, a new random key is written to {@code file} (owner-only permissions where
     * the file system has them).
     */
    public static MasterKey resolve(Path file, boolean generateIfMissing) throws IOException {
        return resolve(file, generateIfMissing, CrashPoints.bound());
    }

    /**
     * {@link #resolve(Path, boolean)} reporting the crash point {@code master-key.created} to
     * {@code points}, the store's.
     */
    public static MasterKey resolve(Path file, boolean generateIfMissing, TestPoints points)
            throws IOException {
        String env = System.getenv(ENV);
        if (env != null && !env.isBlank()) {
            return new MasterKey(decode(env.trim(), "environment variable " + ENV));
        }
        if (Files.exists(file)) {
            return new MasterKey(
                    decode(
                            IoErrors.readString(file, StandardCharsets.US_ASCII).trim(),
                            "key file " + file));
        }
        if (!generateIfMissing) {
            throw new IOException("no master key: set " + ENV + " or create the key file " + file);
        }
        byte[] fresh = new byte[LENGTH];
        new SecureRandom().nextBytes(fresh);
        Path folder = file.toAbsolutePath().getParent();
        Files.createDirectories(folder);
        // Written beside and renamed into place: a crash while the key is written leaves no key
        // file (a half-written one would refuse every later start), and nothing was encrypted
        // under a key that never became the file.
        Path pending = file.resolveSibling(file.getFileName() + ".new");
        Files.deleteIfExists(pending);
        writeOwnerOnly(
                points,
                pending,
                (Base64.getEncoder().encodeToString(fresh) + "\n")
                        .getBytes(StandardCharsets.US_ASCII));
        Files.move(pending, file, StandardCopyOption.ATOMIC_MOVE);
        ChecksummedFiles.fsyncDirectory(folder);
        LOG.log(
                Level.WARNING,
                "Generated a new master key at {0}. Anyone holding it and the keystore can read the"
                        + " store: keep it off backups of the data folder, or supply {1} instead.",
                file,
                ENV);
        MasterKey k = new MasterKey(fresh);
        Arrays.fill(fresh, (byte) 0);
        return k;
    }

    /**
     * Creates {@code file} owner-only from its first byte (where the file system has POSIX
     * permissions: tightening them after the write would leave a moment in which anyone could read
     * the key), writes and fsyncs it; a write that fails removes the file, so no half key is found
     * at the next start.
     */
    private static void writeOwnerOnly(TestPoints points, Path file, byte[] content)
            throws IOException {
        boolean posix = file.getFileSystem().supportedFileAttributeViews().contains("posix");
        FileAttribute<?>[] attrs =
                posix
                        ? new FileAttribute<?>[] {
                            PosixFilePermissions.asFileAttribute(
                                    PosixFilePermissions.fromString("rw-------"))
                        }
                        : new FileAttribute<?>[0];
        try (FileChannel ch =
                FileChannel.open(
                        file,
                        Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                        attrs)) {
            points.reached("master-key.created");
            try {
                ByteBuffer b = ByteBuffer.wrap(content);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            } catch (IOException | RuntimeException e) {
                try {
                    Files.deleteIfExists(file);
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            } finally {
                Arrays.fill(content, (byte) 0);
            }
        }
        if (posix) {
            // A umask cannot widen what the creation asked for, but an inherited default ACL can.
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }
    }

    private static byte[] decode(String base64, String where) {
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "master key in " + where + ": expected base64, got something else");
        }
        if (raw.length != LENGTH) {
            throw new IllegalArgumentException(
                    "master key in "
                            + where
                            + ": expected "
                            + LENGTH
                            + " bytes after base64 decoding, got "
                            + raw.length);
        }
        return raw;
    }

    /**
     * A 32-byte key for one purpose, derived from the master key (HMAC-SHA256 of the purpose
     * label), so the wrapping key and the hashing key are never the same bytes.
     */
    public byte[] derive(String purpose) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(("nepenthe/v1/" + purpose).getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
