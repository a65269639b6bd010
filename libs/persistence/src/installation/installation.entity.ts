import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'broker_installation' })
export class InstallationEntity {
  @PrimaryColumn({ type: 'boolean', default: true })
  singleton!: boolean;

  @Column({ type: 'uuid' })
  id!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
