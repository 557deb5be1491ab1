package dev.nepenthe.core.internal.store;

import dev.nepenthe.core.internal.crypto.Keystore;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Streams the files of a quiet store (nothing writes them meanwhile, see {@code
 * StoreServices.writeReplicaImage}) as a {@link ReplicaImage}: every folder and regular file of the
 * data folder and the keystore folder, except what belongs to this machine or this replica alone.
 * Nothing is written to disk on the way (a leftover copy would keep keys a later forget destroys).
 *
 * <p>Left out, and why:
 *
 * <ul>
 *   <li>{@code store.lock} and Lucene's {@code write.lock}: locks of this process; the receiver's
 *       open takes its own.
 *   <li>{@code idmap.cmap} (and its {@code .closed} marker and {@code .grow-} copies): the id map
 *       is derived from the segments, and its file holds the live process's lock words, which every
 *       lookup changes, searches included; an open that finds no clean-close marker rebuilds it
 *       from the segments, as after any crash.
 *   <li>{@code master.key} and {@code master.key.new} in the keystore folder, and the master key
 *       file the store was opened with wherever it lies in either folder: the receiver is opened
 *       with its group's key by its operator; a key that travels with the keystore protects
 *       nothing.
 *   <li>{@code snapshots.registry}: this store's own snapshots, at this machine's paths; they are
 *       not copied, so the receiver has none to purge.
 *   <li>{@code reconciled.stamp}: a clean-close stamp would let the receiver skip reconciliation;
 *       without it the receiver reconciles every collection at open.
 * </ul>
 *
 * <p>The keystore's {@code keys.db} is sent last, read whole under the keystore's lock: the one
 * write that can still happen while the store is quiet is a search releasing an old text index
 * reader, which deletes a segment file no commit names after destroying its key. Sent after the
 * text files, the key of a file already sent may be gone, which is a state a crash leaves too (the
 * receiver's open deletes the orphan file); a file deleted before it was read is skipped.
 */
final class ReplicaImageWriter {

    /** What was sent: file frames and the bytes of their contents. */
    record Sent(int files, long bytes) {}

    private static final int BUFFER = 1 << 16;

    private final Path data;
    private final Path keys;
    private final Keystore keystore;
    private final Path masterKeyFile;

    private DataOutputStream out;
    private int files;
    private long bytes;

    /**
     * @param masterKeyFile the master key file the store was opened with (null: the default in the
     *     keystore folder), left out if it lies in either folder
     */
    ReplicaImageWriter(Path data, Path keys, Keystore keystore, Path masterKeyFile) {
        this.data = data.toAbsolutePath().normalize();
        this.keys = keys.toAbsolutePath().normalize();
        this.keystore = keystore;
        this.masterKeyFile =
                masterKeyFile == null ? null : masterKeyFile.toAbsolutePath().normalize();
    }

    /** Writes the image to {@code sink}, flushed, not closed. */
    Sent write(OutputStream sink) throws IOException {
        ReplicaImage.DigestingOutput digesting = new ReplicaImage.DigestingOutput(sink);
        out = new DataOutputStream(new BufferedOutputStream(digesting, BUFFER));
        out.writeInt(ReplicaImage.MAGIC);
        byte[] name = ReplicaImage.FORMAT.getBytes(StandardCharsets.UTF_8);
        out.writeShort(name.length);
        out.write(name);
        out.writeInt(ReplicaImage.VERSION);
        walk(ReplicaImage.ROOT_DATA, data);
        walk(ReplicaImage.ROOT_KEYS, keys);
        byte[] keysDb = keystore.consistentImage();
        try {
            sendBytes(ReplicaImage.ROOT_KEYS, keystore.file().getFileName().toString(), keysDb);
        } finally {
            Arrays.fill(keysDb, (byte) 0);
        }
        out.writeByte(ReplicaImage.END);
        out.writeInt(files);
        out.writeLong(bytes);
        out.flush();
        out.write(digesting.digest.digest());
        out.flush();
        return new Sent(files, bytes);
    }

    private void walk(byte root, Path base) throws IOException {
        if (Files.isSymbolicLink(base)) {
            throw new IOException(
                    base
                            + ": the store's folder is a symbolic link; expected a folder (a"
                            + " replica copy never follows links)");
        }
        List<Path> found = new ArrayList<>();
        Files.walkFileTree(
                base,
                new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes a) {
                        if (root == ReplicaImage.ROOT_KEYS && dir.equals(data)) {
                            return FileVisitResult.SKIP_SUBTREE; // a data folder kept inside
                        }
                        if (!dir.equals(base)) {
                            found.add(dir);
                        }
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes a)
                            throws IOException {
                        if (a.isSymbolicLink()) {
                            throw new IOException(
                                    file
                                            + ": a symbolic link in the store's folders; expected"
                                            + " regular files and folders only (a replica copy"
                                            + " never follows links)");
                        }
                        if (!a.isRegularFile()) {
                            throw new IOException(
                                    file
                                            + ": expected a regular file or a folder in the store's"
                                            + " folders, got another kind of file");
                        }
                        found.add(file);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException e)
                            throws IOException {
                        if (e instanceof NoSuchFileException && mayVanish(root, base, file)) {
                            return FileVisitResult.CONTINUE;
                        }
                        throw e;
                    }
                });
        // Sorted: the same store streams the same frames in the same order.
        found.sort(null);
        for (Path p : found) {
            String rel = relative(base, p);
            if (excluded(root, base, p, rel)) {
                continue;
            }
            if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                out.writeByte(ReplicaImage.FOLDER);
                out.writeByte(root);
                writePath(rel);
            } else {
                sendFile(root, base, p, rel);
            }
        }
    }

    private static String relative(Path base, Path p) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (Path name : base.relativize(p)) {
            if (!sb.isEmpty()) {
                sb.append('/');
            }
            sb.append(name);
        }
        String rel = sb.toString();
        String problem = ReplicaImage.pathProblem(rel);
        if (problem != null) {
            throw new IOException(p + ": cannot be sent in a replica copy: " + problem);
        }
        return rel;
    }

    /**
     * A text index file may be deleted while the store is quiet (a search releasing an old reader
     * lets go of segments no commit names).
     */
    private static boolean mayVanish(byte root, Path base, Path file) {
        if (root != ReplicaImage.ROOT_DATA) {
            return false;
        }
        Path rel = base.relativize(file);
        return rel.getNameCount() >= 4
                && rel.getName(0).toString().equals("collections")
                && rel.getName(2).toString().equals("text");
    }

    private boolean excluded(byte root, Path base, Path p, String rel) {
        String name = p.getFileName().toString();
        if (masterKeyFile != null
                && (p.equals(masterKeyFile)
                        || p.equals(
                                masterKeyFile.resolveSibling(
                                        masterKeyFile.getFileName() + ".new")))) {
            return true;
        }
        if (root == ReplicaImage.ROOT_DATA) {
            return rel.equals("store.lock")
                    || name.equals("idmap.cmap")
                    || name.equals("idmap.cmap.closed")
                    || name.startsWith("idmap.cmap.grow-")
                    || (name.equals("write.lock") && mayVanish(root, base, p));
        }
        return rel.equals("master.key")
                || rel.equals("master.key.new")
                || rel.equals("snapshots.registry")
                || rel.equals("snapshots.registry.tmp")
                || rel.equals("reconciled.stamp")
                || rel.equals("reconciled.stamp.tmp")
                // Sent last, whole, from the keystore itself.
                || p.equals(keystore.file().toAbsolutePath().normalize());
    }

    private void writePath(String rel) throws IOException {
        byte[] b = rel.getBytes(StandardCharsets.UTF_8);
        out.writeShort(b.length);
        out.write(b);
    }

    private void sendFile(byte root, Path base, Path p, String rel) throws IOException {
        FileChannel ch;
        try {
            ch = FileChannel.open(p, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            if (mayVanish(root, base, p)) {
                return; // deleted since the walk: a file no commit named
            }
            throw e;
        }
        try (ch) {
            long size = ch.size();
            out.writeByte(ReplicaImage.FILE);
            out.writeByte(root);
            writePath(rel);
            out.writeLong(size);
            CRC32C crc = new CRC32C();
            ByteBuffer buf = ByteBuffer.allocate(BUFFER);
            long pos = 0;
            while (pos < size) {
                buf.clear().limit((int) Math.min(BUFFER, size - pos));
                int n = ch.read(buf, pos);
                if (n < 0) {
                    throw new IOException(
                            p
                                    + ": expected "
                                    + size
                                    + " bytes, the file ended after "
                                    + pos
                                    + " (it changed while the store was held quiet)");
                }
                out.write(buf.array(), 0, n);
                crc.update(buf.array(), 0, n);
                pos += n;
            }
            out.writeInt((int) crc.getValue());
            files++;
            bytes += size;
        }
    }

    private void sendBytes(byte root, String rel, byte[] content) throws IOException {
        out.writeByte(ReplicaImage.FILE);
        out.writeByte(root);
        writePath(rel);
        out.writeLong(content.length);
        out.write(content);
        CRC32C crc = new CRC32C();
        crc.update(content);
        out.writeInt((int) crc.getValue());
        files++;
        bytes += content.length;
    }
}
