package dev.nepenthe.core;

import java.nio.file.Path;

/** The file was written by a newer format version than this build can read. */
public final class FileTooNewException extends CorruptFileException {
    public FileTooNewException(Path file, String format, int version, int minVersion, int maxVersion) {
        super(file, format + " version " + version + " is too new: this build reads versions "
                + minVersion + " to " + maxVersion + " (written by a newer Nepenthe?)");
    }
}
