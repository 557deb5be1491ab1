package dev.nepenthe.testing.faults;

import java.nio.file.FileSystemException;

/**
 * An error a {@link FaultPlan} made up for an operation on a path (a rename, a delete, a file
 * created on a full disk): like the JDK's, it names the path.
 */
public final class InjectedFileSystemException extends FileSystemException {

    private static final long serialVersionUID = 1L;

    InjectedFileSystemException(String file, String reason) {
        super(file, null, reason);
    }
}
