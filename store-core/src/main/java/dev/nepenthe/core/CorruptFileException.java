package dev.nepenthe.core;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A file's bytes are not what its format promises (bad magic, checksum, truncation). The message
 * ends with the file's path; it never quotes the file's content.
 */
public class CorruptFileException extends IOException {
    /** The damaged file. */
    private final Path file;

    /**
     * Builds the exception.
     *
     * @param file the damaged file
     * @param message what is wrong, ideally expected against found and a likely cause; the file's
     *     path is appended
     */
    public CorruptFileException(Path file, String message) {
        super(message + " (file: " + file + ")");
        this.file = file;
    }

    /**
     * Builds the exception with the failure that revealed the damage (a checksum verdict, a parse
     * error).
     *
     * @param file the damaged file
     * @param message what is wrong; the file's path is appended
     * @param cause what revealed it
     */
    public CorruptFileException(Path file, String message, Throwable cause) {
        super(message + " (file: " + file + ")", cause);
        this.file = file;
    }

    /**
     * The damaged file.
     *
     * @return the path the exception was built with
     */
    public Path file() {
        return file;
    }
}
