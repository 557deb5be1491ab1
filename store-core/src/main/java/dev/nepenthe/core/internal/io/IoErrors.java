package dev.nepenthe.core.internal.io;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Names the file in an I/O error. A channel's errors carry only the operating system's words ("No
 * space left on device", "Input/output error"), and an operator who reads one in a log or in {@code
 * health()} must learn which file of which collection failed.
 */
public final class IoErrors {

    private IoErrors() {}

    /** {@link Files#readAllBytes}, its errors naming the file. */
    public static byte[] readAllBytes(Path file) throws IOException {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw naming(file, "reading", e);
        }
    }

    /** {@link Files#readString}, its errors naming the file. */
    public static String readString(Path file, Charset charset) throws IOException {
        try {
            return Files.readString(file, charset);
        } catch (IOException e) {
            throw naming(file, "reading", e);
        }
    }

    /**
     * {@code e} with {@code file} in its message: unchanged when it names the file already (a
     * {@link FileSystemException}, or a message that holds the path), else a new {@link
     * IOException} whose cause is {@code e}.
     *
     * @param doing what was being done, as a gerund ("writing", "syncing")
     */
    public static IOException naming(Path file, String doing, IOException e) {
        String m = e.getMessage();
        if (e instanceof FileSystemException || (m != null && m.contains(file.toString()))) {
            return e;
        }
        return new IOException(
                doing + " " + file + " failed: " + (m == null ? e.getClass().getSimpleName() : m),
                e);
    }
}
