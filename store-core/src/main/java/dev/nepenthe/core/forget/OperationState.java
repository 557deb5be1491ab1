package dev.nepenthe.core.forget;

/**
 * Where a forget operation stands. {@code RECEIVED -> BLOCKED -> CLEANUP -> VERIFYING -> SEALED};
 * or it stops in {@code COMPLETED_WITH_EXCEPTION} (a legal hold keeps the data, retrieval stays
 * blocked; lifting the hold resumes it) or {@code NEEDS_REVIEW} (verification found residue, or a
 * surface cannot prove erasure; the operator forgets more and re-verifies, or records an override).
 */
public enum OperationState {
    /** Registered and fenced; the mark is under way ({@code forget} has not returned yet). */
    RECEIVED,
    /**
     * Marked: no read returns the scope, writes in it are refused, and the operation is durable.
     */
    BLOCKED,
    /** The worker is removing the scope and its provenance closure from every surface. */
    CLEANUP,
    /** The worker is collecting each surface's proof and probing the survivors. */
    VERIFYING,
    /** Erasure proved, keys destroyed, evidence appended, receipt issued. Final. */
    SEALED,
    /** Stopped by a legal hold: the data is kept and stays blocked until the hold lifts. */
    COMPLETED_WITH_EXCEPTION,
    /** Verification found suspects or a surface could not prove erasure; waits for an operator. */
    NEEDS_REVIEW;

    /**
     * True for the states an operation rests in until someone acts (or forever, for SEALED).
     *
     * @return whether this is SEALED, COMPLETED_WITH_EXCEPTION or NEEDS_REVIEW
     */
    public boolean isSettled() {
        return this == SEALED || this == COMPLETED_WITH_EXCEPTION || this == NEEDS_REVIEW;
    }
}
