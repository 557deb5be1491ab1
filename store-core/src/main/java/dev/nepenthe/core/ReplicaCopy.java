package dev.nepenthe.core;

import dev.nepenthe.core.internal.store.ReplicaImageReader;
import dev.nepenthe.core.internal.store.StoreServices;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.Objects;

/**
 * A consistent image of a live store's files, for another replica of the same group: a new or
 * lagging replica receives the leader's store instead of replaying a log.
 *
 * <p>The image is a state the store could have crashed in: write-ahead logs and journals included,
 * so the receiver's {@link Nepenthe#open} recovers it as after a crash, serves exactly the records
 * that were live when the copy was taken, resumes forgets that were in progress, and reconciles
 * every collection. Every replica of a group is opened with the same master key (its operator
 * supplies it, {@link StoreOptions#masterKeyFile} or {@code NEPENTHE_MASTER_KEY}), so the
 * keystore's wrapped keys and the keyed hashes on disk are valid on the receiver; a receiver opened
 * with another key fails to open the copy.
 *
 * <p>What an image holds: every folder and regular file of the data folder and of the keystore
 * folder, except the locks of the sending process ({@code store.lock}, the text indexes' {@code
 * write.lock}), the id maps ({@code idmap.cmap}: derived from the segments and rebuilt by the
 * receiver's open), the master key file, the registry of the sender's own snapshots (not copied,
 * and named by the sender's paths) and the clean-close stamp (so the receiver reconciles). Nothing
 * is written to the sender's disk on the way: a leftover copy would keep keys a later forget
 * destroys.
 *
 * <pre>{@code
 * ReplicaCopy.Summary sent = ReplicaCopy.write(leader, socketOut);
 * ReplicaCopy.Summary got = ReplicaCopy.read(socketIn, Path.of("n2/store"), Path.of("n2/store.keys"));
 * try (Nepenthe replica = Nepenthe.open(Path.of("n2/store"), groupOptions)) { ... }
 * }</pre>
 */
public final class ReplicaCopy {

    /**
     * What an image held.
     *
     * @param files the files it carried
     * @param bytes the bytes of their contents (the stream adds a few per file)
     */
    public record Summary(int files, long bytes) {}

    private ReplicaCopy() {}

    /**
     * Streams a consistent image of {@code store} (its data folder and its keystore folder) to
     * {@code out}. The store keeps serving searches and gets; everything that writes its files
     * waits until the image is written: collection management, snapshots and the close (this
     * store's monitor), then marks, holds, overrides, re-admissions and the forget worker, which
     * finishes the step it is in first, then every collection's writes, and the background file
     * work they left (text index merges, index file deletions) is awaited. So a write that returned
     * before this was called is in the image, and a forget that returned is in it as marked, or
     * further along.
     *
     * <p>Costs: a read of every file of both folders, written to {@code out} as fast as it takes
     * them, writes held all the while; the keystore file is also held in memory while it is sent.
     *
     * @param store an open store
     * @param out where the image goes; flushed, not closed
     * @return how many files and bytes the image carried
     * @throws IOException if a file cannot be read, a folder holds a symbolic link or a file that
     *     is neither a regular file nor a folder, or {@code out} fails; the store is unchanged
     * @throws IllegalStateException if the store is closed, or read-only after a failed write (its
     *     files cannot be vouched for until it is reopened)
     */
    public static Summary write(Nepenthe store, OutputStream out) throws IOException {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(out, "out");
        StoreServices.ReplicaImageSent sent = store.writeReplicaImage(out);
        return new Summary(sent.files(), sent.bytes());
    }

    /**
     * Reads one image from {@code in} into {@code storeFolder} and {@code keysFolder}, reading
     * exactly up to the image's end frame and nothing past it (a caller may send other data after
     * the image). Every file and folder is fsynced before this returns. Open the store afterwards
     * with the group's master key and {@code keysFolder} as its keystore.
     *
     * <p>Refused, with a message naming what was expected and what arrived: a stream that is not an
     * image (magic, format, version), a truncated one, a checksum that does not match (per file,
     * and the end frame's digest of the whole stream), a path that is absolute, has an empty, a
     * {@code .} or a {@code ..} name, or comes twice, an unknown root or frame, a count in the end
     * frame that differs from what arrived. On any failure what was written is deleted, and a
     * folder this call created removed.
     *
     * @param in the image, positioned at its first byte; not closed
     * @param storeFolder the data folder to fill; absent or empty
     * @param keysFolder the keystore folder to fill; absent or empty, and apart from the data
     *     folder
     * @return how many files and bytes the image carried
     * @throws IOException if the image is damaged or cut short, or a write or fsync fails
     * @throws IllegalArgumentException if a folder exists and is not empty, or one lies inside the
     *     other
     */
    public static Summary read(InputStream in, Path storeFolder, Path keysFolder)
            throws IOException {
        Objects.requireNonNull(in, "in");
        ReplicaImageReader.Received got =
                ReplicaImageReader.read(
                        in,
                        Objects.requireNonNull(storeFolder, "storeFolder"),
                        Objects.requireNonNull(keysFolder, "keysFolder"));
        return new Summary(got.files(), got.bytes());
    }
}
