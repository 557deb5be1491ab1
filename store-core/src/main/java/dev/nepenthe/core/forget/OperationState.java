package dev.nepenthe.core.forget;

/**
 * Where a forget operation stands. {@code RECEIVED -> BLOCKED -> CLEANUP -> VERIFYING ->
 * SEALED}; or it stops in {@code COMPLETED_WITH_EXCEPTION} (a legal hold keeps the data,
 * retrieval stays blocked; lifting the hold resumes it) or {@code NEEDS_REVIEW} (verification
 * found residue, or a surface cannot prove erasure; the operator forgets more and re-verifies,
 * or records an override).
 */
public enum OperationState {
    RECEIVED, BLOCKED, CLEANUP, VERIFYING, SEALED, COMPLETED_WITH_EXCEPTION, NEEDS_REVIEW;

    /** True for the states an operation rests in until someone acts (or forever, for SEALED). */
    public boolean isSettled() {
        return this == SEALED || this == COMPLETED_WITH_EXCEPTION || this == NEEDS_REVIEW;
    }
}
