package dev.nepenthe.core;

import java.nio.file.Path;

/** The file was written by an older format version than this build can read. */
public final class FileTooOldException extends CorruptFileException {
    public FileTooOldException(Path file, String format, int version, int minVersion, int maxVersion) {
        super(file, format + " version " + version + " is too old: this build reads versions "
                + minVersion + " to " + maxVersion + " (rebuild or migrate the file with an older release)");
    }
}
