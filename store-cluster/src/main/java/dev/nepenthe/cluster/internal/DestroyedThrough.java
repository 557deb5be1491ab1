package dev.nepenthe.cluster.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The highest log index up to which this replica destroyed its journal for a forget, kept in a
 * small file: an entry at or below it was applied here and its body destroyed on purpose, so when
 * Ratis hands it to {@link NodeStateMachine#write} again (a restart whose Raft log was forced
 * behind the journal), it is not written back. The journal itself does not remember how far its
 * destroys went.
 */
final class DestroyedThrough {

    private final Path file;
    private volatile long index;

    private DestroyedThrough(Path file, long index) {
        this.file = file;
        this.index = index;
    }

    static DestroyedThrough open(Path file) throws IOException {
        if (!Files.exists(file)) {
            return new DestroyedThrough(file, 0);
        }
        String text = Files.readString(file, StandardCharsets.US_ASCII).strip();
        try {
            return new DestroyedThrough(file, Long.parseLong(text));
        } catch (NumberFormatException e) {
            throw new IOException(
                    file
                            + ": expected a log index, got "
                            + text.length()
                            + " characters that are"
                            + " not one");
        }
    }

    long index() {
        return index;
    }

    /** Records that the journal is destroyed through {@code through} (forced before it returns). */
    synchronized void raise(long through) throws IOException {
        if (through > index) {
            Durable.write(file, Long.toString(through));
            index = through;
        }
    }
}
