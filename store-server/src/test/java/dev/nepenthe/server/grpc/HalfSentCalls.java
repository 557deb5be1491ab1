package dev.nepenthe.server.grpc;

import io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ConnectionHandlerBuilder;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2FrameAdapter;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Settings;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A hostile client below gRPC: raw HTTP/2 on loopback, as a client in another language could write
 * it. Each call sends its headers and a gRPC frame header declaring a message of {@code declared}
 * bytes, then only {@code sent} bytes of it, and never ends its stream: a half-sent call. The
 * server's answer to each stream (the grpc-status and grpc-message of its trailers, or a reset) is
 * recorded. The body bytes of all calls share one zeroed buffer, so the client holds {@code sent}
 * bytes however many calls it makes.
 */
final class HalfSentCalls implements AutoCloseable {

    /** How one stream ended: a gRPC status code and message, or a reset (code -1). */
    record Ending(int code, String message) {}

    private final EventLoopGroup group =
            new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final List<Channel> channels = new ArrayList<>();
    private final List<Map<Integer, Ending>> endings = new ArrayList<>();
    private final CountDownLatch ended;
    private final List<Client> clients = new ArrayList<>();

    /**
     * Opens {@code connections} connections and sends {@code calls} half-sent calls over them in
     * turn.
     */
    HalfSentCalls(
            int port, int connections, int calls, String path, String token, int declared, int sent)
            throws InterruptedException {
        this.ended = new CountDownLatch(calls);
        ByteBuf body = Unpooled.buffer(5 + sent);
        body.writeByte(0).writeInt(declared).writeZero(sent);
        for (int c = 0; c < connections; c++) {
            Map<Integer, Ending> mine = new ConcurrentHashMap<>();
            endings.add(mine);
            Client client = new Client(mine);
            clients.add(client);
            Channel ch =
                    new Bootstrap()
                            .group(group)
                            .channel(NioSocketChannel.class)
                            .handler(client.handler)
                            .connect("127.0.0.1", port)
                            .sync()
                            .channel();
            channels.add(ch);
        }
        // As an HTTP/2 client should, the calls go once the server has sent its settings
        // (its windows among them).
        for (Client client : clients) {
            if (!client.settings.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the server sent no HTTP/2 settings within 10 s");
            }
        }
        for (int i = 0; i < calls; i++) {
            Client client = clients.get(i % connections);
            Channel ch = channels.get(i % connections);
            ByteBuf mine = body.retainedDuplicate();
            ch.eventLoop().execute(() -> client.send(path, token, mine));
        }
        body.release();
    }

    /** Waits up to {@code seconds} for every call to end; whether they all did. */
    boolean awaitAll(long seconds) throws InterruptedException {
        return ended.await(seconds, TimeUnit.SECONDS);
    }

    /** The endings so far. */
    List<Ending> endings() {
        List<Ending> all = new ArrayList<>();
        for (Map<Integer, Ending> m : endings) {
            all.addAll(m.values());
        }
        return all;
    }

    private Channel channelOf(Client c) {
        return channels.get(clients.indexOf(c));
    }

    @Override
    public void close() {
        for (Channel ch : channels) {
            ch.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /**
     * One connection: its HTTP/2 handler, and how to send a half-sent call on it (on its event
     * loop).
     */
    private final class Client {
        final Http2ConnectionHandler handler;

        /** Counted down when the server's SETTINGS arrive. */
        final CountDownLatch settings = new CountDownLatch(1);

        Client(Map<Integer, Ending> endings) {
            handler =
                    new Http2ConnectionHandlerBuilder()
                            .server(false)
                            .frameListener(new Recorder(endings, settings))
                            .initialSettings(Http2Settings.defaultSettings())
                            .build();
        }

        void send(String path, String token, ByteBuf body) {
            ChannelHandlerContext ctx = channelOf(this).pipeline().context(handler);
            int id = handler.connection().local().incrementAndGetNextStreamId();
            Http2Headers h =
                    new DefaultHttp2Headers()
                            .method("POST")
                            .scheme("http")
                            .authority("localhost")
                            .path(path);
            h.set("content-type", "application/grpc")
                    .set("te", "trailers")
                    .set("authorization", "Bearer " + token);
            handler.encoder().writeHeaders(ctx, id, h, 0, false, ctx.newPromise());
            handler.encoder().writeData(ctx, id, body, 0, false, ctx.newPromise());
            // Through the whole pipeline: the HTTP/2 handler's own flush is what writes the data
            // its flow controller queued (ctx.flush() would start below it and skip that).
            ctx.channel().flush();
        }
    }

    /** Records each stream's ending, once. */
    private final class Recorder extends Http2FrameAdapter {
        private final Map<Integer, Ending> endings;
        private final CountDownLatch settings;

        Recorder(Map<Integer, Ending> endings, CountDownLatch settings) {
            this.endings = endings;
            this.settings = settings;
        }

        @Override
        public void onSettingsRead(ChannelHandlerContext ctx, Http2Settings s) {
            settings.countDown();
        }

        @Override
        public void onHeadersRead(
                ChannelHandlerContext ctx,
                int streamId,
                Http2Headers headers,
                int padding,
                boolean endOfStream) {
            CharSequence status = headers.get("grpc-status");
            if (status != null) {
                CharSequence message = headers.get("grpc-message");
                end(
                        streamId,
                        new Ending(
                                Integer.parseInt(status.toString()),
                                message == null
                                        ? ""
                                        : URLDecoder.decode(
                                                message.toString().replace("+", "%2B"),
                                                StandardCharsets.UTF_8)));
            }
        }

        @Override
        public void onHeadersRead(
                ChannelHandlerContext ctx,
                int streamId,
                Http2Headers headers,
                int streamDependency,
                short weight,
                boolean exclusive,
                int padding,
                boolean endOfStream) {
            onHeadersRead(ctx, streamId, headers, padding, endOfStream);
        }

        @Override
        public void onRstStreamRead(ChannelHandlerContext ctx, int streamId, long errorCode) {
            end(streamId, new Ending(-1, "RST_STREAM " + errorCode));
        }

        private void end(int streamId, Ending e) {
            if (endings.putIfAbsent(streamId, e) == null) {
                ended.countDown();
            }
        }
    }
}
