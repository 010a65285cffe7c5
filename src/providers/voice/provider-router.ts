import type { DisconnectionReason } from "../../domain/calls/call-states.js";
import type {
  InboundCallRequest,
  PhoneCallRequest,
  PlacedCall,
  ProviderCall,
  RemoteCall,
  SimulatedCallerHost,
  VoiceCapabilities,
  VoiceProvider,
  WebCallClient,
  WebCallConnection,
  WebCallHost,
} from "../../domain/calls/ports.js";
import { voiceProviderNames, type VoiceProviderName } from "../../domain/projects/project-config.js";

/**
 * Every voice provider of the instance behind one VoiceProvider: a call goes to the provider of the project version
 * it was created with. A provider whose web calls Parley hosts (its capabilities say so) has them created by the
 * host, Parley's own call socket.
 */
export class ProviderRouter implements VoiceProvider, WebCallHost, SimulatedCallerHost {
  readonly name = "router";
  /** The router itself carries nothing; ask `capabilitiesOf` for a provider's. */
  readonly capabilities: VoiceCapabilities = { carries: "parley", records: "rendered", webCalls: "parley", transfers: false, callsBack: false };

  constructor(
    private readonly providers: Record<VoiceProviderName, VoiceProvider> & { simulated: VoiceProvider & SimulatedCallerHost },
    private readonly host: WebCallHost & VoiceProvider,
  ) {}

  /** A simulated caller is the simulated provider's, whatever the project's own provider. */
  playSimulatedCaller(request: InboundCallRequest): Promise<void> {
    return this.providers.simulated.playSimulatedCaller(request);
  }

  /** A provider's capabilities by the name a call or project version records; an unknown name has the host's. */
  capabilitiesOf(name: string): VoiceCapabilities {
    const provider = voiceProviderNames.find((candidate) => candidate === name);
    return provider ? this.providers[provider].capabilities : this.host.capabilities;
  }

  createPhoneCall(request: PhoneCallRequest): Promise<PlacedCall | void> {
    return this.providers[request.config.voice.provider].createPhoneCall(request);
  }

  createWebCall(request: ProviderCall): Promise<PlacedCall | void> {
    const provider = this.providers[request.config.voice.provider];
    return provider.capabilities.webCalls === "parley" ? this.host.createWebCall(request) : provider.createWebCall(request);
  }

  async hangUp(call: RemoteCall): Promise<void> {
    await this.providers[call.config.voice.provider].hangUp?.(call);
  }

  async transfer(call: RemoteCall, number: string): Promise<void> {
    const provider = this.providers[call.config.voice.provider];
    if (!provider.transfer) throw new Error(`the ${provider.name} provider cannot transfer a call by its API`);
    await provider.transfer(call, number);
  }

  join(request: ProviderCall, client: WebCallClient, options: { audio: boolean }): WebCallConnection {
    return this.host.join(request, client, options);
  }

  /** Each provider hangs up what it carries of the call, if anything: the others have nothing of it. */
  async endCall(callId: string, reason: DisconnectionReason): Promise<void> {
    await Promise.all(Object.values(this.providers).map((provider) => provider.endCall(callId, reason)));
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.providers).map((provider) => provider.close()));
  }
}
