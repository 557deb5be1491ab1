package dev.nepenthe.core;

import java.io.IOException;
import java.nio.file.Path;

/** A file's bytes are not what its format promises (bad magic, checksum, truncation). */
public class CorruptFileException extends IOException {
    private final Path file;

    public CorruptFileException(Path file, String message) {
        super(message + " (file: " + file + ")");
        this.file = file;
    }

    public CorruptFileException(Path file, String message, Throwable cause) {
        super(message + " (file: " + file + ")", cause);
        this.file = file;
    }

    public Path file() {
        return file;
    }
}
