package dev.nepenthe.core.internal.store;

import dev.nepenthe.core.internal.io.ChecksummedFiles;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Reads one {@link ReplicaImage} into a data folder and a keystore folder, both absent or empty,
 * checking every frame as it comes and reading nothing past the end frame. Files and folders are
 * fsynced before it returns; on any failure what it wrote is deleted (and a folder it created
 * removed), so a half-received image never looks like a store.
 */
public final class ReplicaImageReader {

    /** What was received: file frames and the bytes of their contents. */
    public record Received(int files, long bytes) {}

    private static final int BUFFER = 1 << 16;

    private final Path data;
    private final Path keys;
    private final Set<String> seen = new HashSet<>();

    /** Every folder the image made or wrote into, fsynced at the end (deepest first). */
    private final Set<Path> folders = new TreeSet<>(Comparator.reverseOrder());

    private ReplicaImage.DigestingInput counted;
    private DataInputStream in;
    private int files;
    private long bytes;

    private ReplicaImageReader(Path data, Path keys) {
        this.data = data.toAbsolutePath().normalize();
        this.keys = keys.toAbsolutePath().normalize();
    }

    /**
     * Reads one image from {@code source} into {@code data} and {@code keys}.
     *
     * @throws IOException naming what was expected and what arrived, after deleting what was
     *     written
     * @throws IllegalArgumentException if a folder is not absent or empty, or one lies inside the
     *     other
     */
    public static Received read(InputStream source, Path data, Path keys) throws IOException {
        ReplicaImageReader r = new ReplicaImageReader(data, keys);
        if (r.data.startsWith(r.keys) || r.keys.startsWith(r.data)) {
            throw new IllegalArgumentException(
                    "replica copy: expected the data folder "
                            + r.data
                            + " and the keystore folder "
                            + r.keys
                            + " apart, got one inside the other");
        }
        boolean dataExisted = checkAbsentOrEmpty(r.data, "data");
        boolean keysExisted = checkAbsentOrEmpty(r.keys, "keystore");
        try {
            Files.createDirectories(r.data);
            Files.createDirectories(r.keys);
            r.folders.add(r.data);
            r.folders.add(r.keys);
            Received got = r.readAll(source);
            r.syncFolders();
            return got;
        } catch (IOException | RuntimeException e) {
            try {
                clear(r.data, dataExisted);
                clear(r.keys, keysExisted);
            } catch (IOException | RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /**
     * Whether {@code folder} exists (empty); refuses one that holds anything or is not a folder.
     */
    private static boolean checkAbsentOrEmpty(Path folder, String what) throws IOException {
        if (!Files.exists(folder, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
            throw new IllegalArgumentException(
                    "replica copy: the "
                            + what
                            + " folder "
                            + folder
                            + " exists and is not a folder; expected it absent or empty");
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(folder)) {
            if (entries.iterator().hasNext()) {
                throw new IllegalArgumentException(
                        "replica copy: the "
                                + what
                                + " folder "
                                + folder
                                + " is not empty; expected it absent or empty");
            }
        }
        return true;
    }

    /** Deletes what the image wrote under {@code folder}, and the folder if the image made it. */
    private static void clear(Path folder, boolean existed) throws IOException {
        if (!Files.exists(folder, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        List<Path> all;
        try (Stream<Path> walk = Files.walk(folder)) {
            all = walk.sorted(Comparator.reverseOrder()).toList();
        }
        for (Path p : all) {
            if (!p.equals(folder) || !existed) {
                Files.deleteIfExists(p);
            }
        }
    }

    private Received readAll(InputStream source) throws IOException {
        counted = new ReplicaImage.DigestingInput(source);
        in = new DataInputStream(counted);
        int magic = readInt("the image's magic number");
        if (magic != ReplicaImage.MAGIC) {
            throw corrupt(
                    String.format(
                            "expected the magic number 0x%08x (\"NPRC\") of a replica copy, got"
                                    + " 0x%08x (not a replica copy?)",
                            ReplicaImage.MAGIC, magic));
        }
        String format = readString("the format name", 64);
        if (!format.equals(ReplicaImage.FORMAT)) {
            throw corrupt("expected the format '" + ReplicaImage.FORMAT + "', got another name");
        }
        int version = readInt("the format version");
        if (version != ReplicaImage.VERSION) {
            throw corrupt(
                    "expected format version "
                            + ReplicaImage.VERSION
                            + ", got "
                            + version
                            + (version > ReplicaImage.VERSION
                                    ? " (written by a newer Nepenthe)"
                                    : ""));
        }
        while (true) {
            long at = counted.position;
            int type = in.read();
            switch (type) {
                case ReplicaImage.FOLDER -> readFolder();
                case ReplicaImage.FILE -> readFile();
                case ReplicaImage.END -> {
                    return readEnd(at);
                }
                default ->
                        throw corrupt(
                                "at byte "
                                        + at
                                        + ": expected a folder frame ('D'), a file frame ('F') or"
                                        + " the end frame ('E'), got "
                                        + ReplicaImage.frameName(type)
                                        + (type < 0
                                                ? ": it ended before the end frame (truncated?)"
                                                : ""));
            }
        }
    }

    private void readFolder() throws IOException {
        byte root = readRoot();
        String rel = readPath();
        Path dir = target(root, rel);
        Files.createDirectories(dir);
        folders.add(dir);
        folders.add(dir.getParent());
    }

    private void readFile() throws IOException {
        byte root = readRoot();
        String rel = readPath();
        String name = ReplicaImage.rootName(root) + ":" + rel;
        long length = readLong("the length of " + name);
        if (length < 0) {
            throw corrupt("expected a length of 0 or more for " + name + ", got " + length);
        }
        Path file = target(root, rel);
        Path parent = file.getParent();
        Files.createDirectories(parent);
        folders.add(parent);
        CRC32C crc = new CRC32C();
        byte[] buf = new byte[BUFFER];
        try (FileChannel ch =
                FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            long left = length;
            while (left > 0) {
                int n = (int) Math.min(buf.length, left);
                try {
                    in.readFully(buf, 0, n);
                } catch (EOFException e) {
                    throw corrupt(
                            "truncated: expected "
                                    + length
                                    + " bytes of "
                                    + name
                                    + ", the stream ended after "
                                    + (length - left)
                                    + " of them or fewer");
                }
                crc.update(buf, 0, n);
                ByteBuffer b = ByteBuffer.wrap(buf, 0, n);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                left -= n;
            }
            int expected = readInt("the checksum of " + name);
            if (expected != (int) crc.getValue()) {
                throw corrupt(
                        String.format(
                                "checksum of %s: expected CRC32C %08x as the image states, the"
                                        + " bytes that arrived give %08x (damaged in transit?)",
                                name, expected, (int) crc.getValue()));
            }
            ch.force(true);
        }
        files++;
        bytes += length;
    }

    private Received readEnd(long at) throws IOException {
        int count = readInt("the end frame's file count");
        long total = readLong("the end frame's byte count");
        byte[] actual = counted.digest.digest();
        byte[] stated = new byte[ReplicaImage.DIGEST_BYTES];
        try {
            in.readFully(stated);
        } catch (EOFException e) {
            throw corrupt("truncated: expected the end frame's digest, the stream ended");
        }
        if (count != files || total != bytes) {
            throw corrupt(
                    "end frame at byte "
                            + at
                            + ": it states "
                            + count
                            + " files of "
                            + total
                            + " bytes, the image held "
                            + files
                            + " files of "
                            + bytes
                            + " bytes");
        }
        if (!MessageDigest.isEqual(actual, stated)) {
            throw corrupt(
                    "end frame: expected the stream's SHA-256 "
                            + HexFormat.of().formatHex(stated)
                            + " as it states, the bytes that arrived give "
                            + HexFormat.of().formatHex(actual)
                            + " (damaged in transit?)");
        }
        return new Received(files, bytes);
    }

    private byte readRoot() throws IOException {
        long at = counted.position;
        int tag = in.read();
        if (tag != ReplicaImage.ROOT_DATA && tag != ReplicaImage.ROOT_KEYS) {
            throw corrupt(
                    "at byte "
                            + at
                            + ": expected a root tag (1: data, 2: keys), got "
                            + (tag < 0 ? "the end of the stream" : String.valueOf(tag)));
        }
        return (byte) tag;
    }

    private String readPath() throws IOException {
        long at = counted.position;
        String rel = readString("a path", ReplicaImage.MAX_PATH_BYTES);
        String problem = ReplicaImage.pathProblem(rel);
        if (problem != null) {
            throw corrupt("at byte " + at + ": expected a relative path, got " + problem);
        }
        return rel;
    }

    /** The file or folder {@code rel} names under its root; refuses a second frame for it. */
    private Path target(byte root, String rel) throws IOException {
        Path base = root == ReplicaImage.ROOT_DATA ? data : keys;
        Path p = base.resolve(rel).normalize();
        if (!p.startsWith(base) || p.equals(base)) {
            throw corrupt("expected a path inside the " + ReplicaImage.rootName(root) + " folder");
        }
        String key = ReplicaImage.rootName(root) + ":" + rel;
        if (!seen.add(key)) {
            throw corrupt("expected each path once, got " + key + " a second time");
        }
        // A folder made through a link would write where it points.
        for (Path q = p.getParent(); q != null && q.startsWith(base); q = q.getParent()) {
            if (Files.isSymbolicLink(q)) {
                throw corrupt("expected no symbolic link on the way to " + key);
            }
        }
        return p;
    }

    private String readString(String what, int maxBytes) throws IOException {
        int len = readUnsignedShort(what);
        if (len > maxBytes) {
            throw corrupt("expected " + what + " of at most " + maxBytes + " bytes, got " + len);
        }
        byte[] b = new byte[len];
        try {
            in.readFully(b);
        } catch (EOFException e) {
            throw corrupt(
                    "truncated: expected " + len + " bytes of " + what + ", the stream ended");
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b))
                    .toString();
        } catch (CharacterCodingException e) {
            throw corrupt("expected " + what + " in UTF-8, got bytes that are not");
        }
    }

    private int readUnsignedShort(String what) throws IOException {
        try {
            return in.readUnsignedShort();
        } catch (EOFException e) {
            throw corrupt("truncated: expected the length of " + what + ", the stream ended");
        }
    }

    private int readInt(String what) throws IOException {
        try {
            return in.readInt();
        } catch (EOFException e) {
            throw corrupt("truncated: expected " + what + ", the stream ended");
        }
    }

    private long readLong(String what) throws IOException {
        try {
            return in.readLong();
        } catch (EOFException e) {
            throw corrupt("truncated: expected " + what + ", the stream ended");
        }
    }

    private IOException corrupt(String what) {
        return new IOException(
                "replica copy: " + what + " (after " + counted.position + " bytes of the stream)");
    }

    private void syncFolders() throws IOException {
        List<Path> all = new ArrayList<>(folders);
        all.add(data.getParent());
        all.add(keys.getParent());
        for (Path dir : all) {
            if (dir != null) {
                ChecksummedFiles.fsyncDirectory(dir);
            }
        }
    }
}
