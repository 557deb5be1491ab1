package dev.nepenthe.core.forget;

/**
 * A write refused because it falls in the scope of a forget operation marked before it
 * arrived: a stale queue message for a forgotten subject, a re-upload of a forgotten record or
 * source version, or a derived record whose {@code derivedFrom} names a forgotten record. The
 * batch it was part of is stored not at all. The message names the batch position and the
 * operation, never the record's content or its subject.
 */
public final class ForgottenScopeException extends IllegalArgumentException {
    private final String operationId;
    private final int batchPosition;

    public ForgottenScopeException(String operationId, int batchPosition, String why) {
        super("record at batch position " + batchPosition + " is refused: " + why + " (forget operation "
                + operationId + "); writes after a forget's mark are refused, so nothing of the batch was stored");
        this.operationId = operationId;
        this.batchPosition = batchPosition;
    }

    public String operationId() {
        return operationId;
    }

    public int batchPosition() {
        return batchPosition;
    }
}
