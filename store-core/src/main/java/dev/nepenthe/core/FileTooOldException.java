package dev.nepenthe.core;

import java.nio.file.Path;

/** The file was written by an older format version than this build can read. */
public final class FileTooOldException extends FileVersionException {
    /**
     * Builds the exception; the message states the version found and the range this build reads.
     *
     * @param file the file that was read
     * @param format the format's name, as the message gives it
     * @param version the version the file's header gives
     * @param minVersion the oldest version this build reads
     * @param maxVersion the newest version this build reads
     */
    public FileTooOldException(
            Path file, String format, int version, int minVersion, int maxVersion) {
        super(
                file,
                format,
                version,
                "too old",
                minVersion,
                maxVersion,
                " (rebuild or migrate the file with an older release)");
    }
}
