package dev.nepenthe.server.cli;

import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.grpc.v1.UpsertResponse;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The client side of one bulk upsert stream, with flow control: {@link #send} waits while gRPC's
 * buffer is full, so a file larger than memory streams at the server's pace. Apart from {@link
 * IngestCommand} because both of its inputs (a JSON Lines file, a folder of documents) upload the
 * same way: {@link #run} opens the stream, cancels it if the sending fails, and closes it.
 */
final class UpsertUpload implements ClientResponseObserver<UpsertRequest, UpsertResponse> {

    /** What sends the batches of one upload. */
    @FunctionalInterface
    interface Body {
        /**
         * Sends every batch.
         *
         * @param upload the stream to send on
         * @throws IOException if the input cannot be read
         * @throws InterruptedException if the sending thread is interrupted
         */
        void send(UpsertUpload upload) throws IOException, InterruptedException;
    }

    private final CompletableFuture<UpsertResponse> done = new CompletableFuture<>();
    private final Object ready = new Object();
    private ClientCallStreamObserver<UpsertRequest> requests;
    private UpsertResponse response;

    private UpsertUpload() {}

    /**
     * Runs {@code body} over a new upload stream, then closes the stream and waits for the server's
     * count. If the body fails, the stream is cancelled (the server keeps the batches it has
     * stored) and the failure goes on. The progress bar, if any, is finished either way.
     *
     * @param client the connection
     * @param bar the progress bar, or null
     * @param body what sends the batches
     * @return the records the server stored
     * @throws IOException if the body cannot read its input
     * @throws InterruptedException if the thread is interrupted
     */
    static long run(ServerConnection.Client client, ProgressBar bar, Body body)
            throws IOException, InterruptedException {
        UpsertUpload upload = new UpsertUpload();
        client.recordsStream().upsertStream(upload);
        try {
            body.send(upload);
        } catch (RuntimeException | IOException | InterruptedException e) {
            upload.cancel(e);
            throw e;
        } finally {
            if (bar != null) {
                bar.finish();
            }
        }
        return upload.finish();
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<UpsertRequest> r) {
        requests = r;
        r.setOnReadyHandler(this::wake);
    }

    void send(UpsertRequest batch) throws InterruptedException {
        synchronized (ready) {
            while (!requests.isReady() && !done.isDone()) {
                ready.wait(100);
            }
        }
        if (done.isDone()) {
            // The server ended the call early (a refused batch): its status says why.
            finish();
            throw new IllegalStateException("the server closed the stream before it was done");
        }
        requests.onNext(batch);
    }

    /** Closes the stream and waits for the server's count. */
    private long finish() throws InterruptedException {
        if (!done.isDone()) {
            requests.onCompleted();
        }
        try {
            return done.get().getUpserted();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    private void cancel(Throwable why) {
        if (!done.isDone()) {
            requests.cancel("the client stopped: " + why.getClass().getSimpleName(), null);
        }
    }

    private void wake() {
        synchronized (ready) {
            ready.notifyAll();
        }
    }

    @Override
    public void onNext(UpsertResponse value) {
        response = value;
    }

    @Override
    public void onError(Throwable t) {
        done.completeExceptionally(t);
        wake();
    }

    @Override
    public void onCompleted() {
        done.complete(response);
        wake();
    }
}
