package dev.nepenthe.core;

import java.nio.file.Path;

/**
 * A file written by a format version outside the range this build reads. It exists so that {@link
 * FileTooNewException} and {@link FileTooOldException} state the version found and the range read
 * with the same words; callers catch one of the two, or {@link CorruptFileException}.
 */
abstract sealed class FileVersionException extends CorruptFileException
        permits FileTooNewException, FileTooOldException {

    /**
     * Builds the exception with the message both kinds share.
     *
     * @param file the file that was read
     * @param format the format's name, as the message gives it
     * @param version the version the file's header gives
     * @param verdict "too new" or "too old"
     * @param minVersion the oldest version this build reads
     * @param maxVersion the newest version this build reads
     * @param hint what to do about it, appended to the message
     */
    FileVersionException(
            Path file,
            String format,
            int version,
            String verdict,
            int minVersion,
            int maxVersion,
            String hint) {
        super(
                file,
                format
                        + " version "
                        + version
                        + " is "
                        + verdict
                        + ": this build reads versions "
                        + minVersion
                        + " to "
                        + maxVersion
                        + hint);
    }
}
