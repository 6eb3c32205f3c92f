/**
 * A TCP relay in front of a server, which a test can fail the way a network
 * fails a database: `stall()` keeps the connections but passes nothing on (a
 * host gone silent, whose sockets hang), `close()` drops them and refuses new
 * ones (a server stopped), `open()` relays again on the same port.
 */
import { createServer, type Server, type Socket, connect } from "node:net";

export class TcpRelay {
  private readonly sockets = new Set<Socket>();
  private stalled = false;

  private constructor(
    private server: Server,
    /** The relay's port on 127.0.0.1. */
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** A relay on a free port of 127.0.0.1 to `target`. */
  static async start(target: { host: string; port: number }): Promise<TcpRelay> {
    const relay = new TcpRelay(createServer(), 0, target);
    const port = await relay.listen(0);
    return Object.assign(relay, { port });
  }

  /** Keeps every connection, new ones too, and passes nothing either way from now on. */
  stall(): void {
    this.stalled = true;
  }

  /** Drops every connection and refuses new ones. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Relays again on the same port (connections stalled before are dropped: their streams lost bytes). */
  async open(): Promise<void> {
    if (this.server.listening) await this.close();
    this.stalled = false;
    this.server = createServer();
    await this.listen(this.port);
  }

  private async listen(port: number): Promise<number> {
    this.server.on("connection", (client) => this.relay(client));
    await new Promise<void>((resolve, reject) => this.server.once("error", reject).listen(port, "127.0.0.1", resolve));
    return (this.server.address() as { port: number }).port;
  }

  private relay(client: Socket): void {
    const upstream = connect(this.target.port, this.target.host);
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      this.sockets.add(from);
      from.on("data", (chunk) => void (this.stalled || to.write(chunk)));
      from.on("error", () => to.destroy());
      from.on("close", () => {
        this.sockets.delete(from);
        to.destroy();
      });
    }
  }
}
